// Helpers shared by the Windows platform files (io/platform_windows.cpp, io/files_windows.cpp,
// app/file_chooser_windows.cpp): UTF-8 <-> UTF-16 and the system's message for an error code.
#pragma once

#include <string>
#include <string_view>

namespace attnviz::platform::win {

std::wstring widen(std::string_view utf8);
std::string narrow(std::wstring_view utf16);
/// FormatMessageW's text for a GetLastError() code, one line ("Access is denied").
std::string error_text(unsigned long code);
/// error_text(GetLastError()).
std::string last_error_text();

}  // namespace attnviz::platform::win
