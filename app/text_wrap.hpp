// Word wrap that also breaks between CJK characters. ImGui 1.86 wraps only at spaces and after a few
// ASCII marks, so a Chinese paragraph (no spaces) broke only around its English words, leaving ragged,
// half-empty lines (the Chinese tour, assets/tours/first-hour.zh.json).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnviz::app {

/// The width in pixels of the text [begin, end).
using MeasureText = std::function<float(const char* begin, const char* end)>;

/// The lines of `text` (UTF-8) no wider than `width`, as byte ranges [begin, end) into it. A line
/// breaks at a newline (always), at spaces (left out of both lines) and between two characters of
/// which one is CJK (Han, kana, Hangul, CJK and full-width punctuation: no space is needed), but never
/// before closing punctuation (，。、；：！？）」』 ” and ASCII , . ; : ! ? )) nor after opening
/// punctuation (（「『 “ and ASCII (). A piece with no break wider than the line is cut between
/// characters. Linear in the text: `measure` is asked for one character at a time.
std::vector<std::pair<std::size_t, std::size_t>> wrap_lines(const std::string& text, float width,
                                                            const MeasureText& measure);

/// ImGui::TextWrapped for such text: the current font, wrapped to the window's content width.
void text_wrapped(const std::string& text);

}  // namespace attnviz::app
