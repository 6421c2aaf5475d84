// app/file_chooser.hpp's backend on Windows: the common item dialog (IFileOpenDialog, IFileSaveDialog),
// shown on the chooser's own thread. ATTNVIZ_FILE_CHOOSER=builtin keeps the app's own popups.
#include "app/file_chooser.hpp"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// (after windows.h)
#include <shobjidl.h>

#include <chrono>

#include "io/platform_windows.hpp"

namespace attnviz::app {

namespace {

using platform::win::narrow;
using platform::win::widen;

ChooseResult chooser_result(ChooseResult::Status status, std::string path = "", std::string message = "") {
    ChooseResult r;
    r.status = status;
    r.path = std::move(path);
    r.message = std::move(message);
    return r;
}

std::string hresult_text(HRESULT hr) {
    return platform::win::error_text(unsigned(hr));
}

// Closes the dialog windows of thread `tid` once `stop` turns true (the app is quitting): a modal
// dialog cannot be closed from another thread otherwise.
class StopWatcher {
  public:
    StopWatcher(DWORD tid, const std::atomic<bool>& stop)
        : thread_([this, tid, &stop] {
              while (!done_.load()) {
                  if (stop.load()) {
                      EnumThreadWindows(
                          tid,
                          [](HWND w, LPARAM) -> BOOL {
                              PostMessageW(w, WM_CLOSE, 0, 0);
                              return TRUE;
                          },
                          0);
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(50));
              }
          }) {}
    ~StopWatcher() {
        done_ = true;
        thread_.join();
    }

  private:
    std::atomic<bool> done_{false};
    std::thread thread_;
};

class WindowsChooser final : public FileChooser {
  public:
    const char* name() const override { return "windows"; }

    ChooseResult choose(const ChooseRequest& request, const std::atomic<bool>& stop) override {
        const HRESULT init = CoInitializeEx(nullptr, COINIT_APARTMENTTHREADED | COINIT_DISABLE_OLE1DDE);
        if (FAILED(init)) return chooser_result(ChooseResult::Status::Unavailable, "", hresult_text(init));
        ChooseResult r = run(request, stop);
        CoUninitialize();
        return r;
    }

  private:
    static ChooseResult run(const ChooseRequest& request, const std::atomic<bool>& stop) {
        const bool save = request.kind == ChooseKind::SaveFile;
        IFileDialog* dialog = nullptr;
        HRESULT hr = CoCreateInstance(save ? CLSID_FileSaveDialog : CLSID_FileOpenDialog, nullptr,
                                      CLSCTX_INPROC_SERVER, save ? IID_IFileSaveDialog : IID_IFileOpenDialog,
                                      reinterpret_cast<void**>(&dialog));
        if (FAILED(hr) || !dialog)
            return chooser_result(ChooseResult::Status::Unavailable, "", hresult_text(hr));

        FILEOPENDIALOGOPTIONS options = 0;
        dialog->GetOptions(&options);
        options |= FOS_FORCEFILESYSTEM | FOS_NOCHANGEDIR;
        if (request.kind == ChooseKind::OpenFolder) options |= FOS_PICKFOLDERS;
        if (request.kind == ChooseKind::OpenFile) options |= FOS_FILEMUSTEXIST;
        if (save) options |= FOS_OVERWRITEPROMPT;
        dialog->SetOptions(options);
        if (!request.title.empty()) dialog->SetTitle(widen(request.title).c_str());
        if (save && !request.file_name.empty()) dialog->SetFileName(widen(request.file_name).c_str());

        // Filters: "attnviz scenes" -> "*.json", then "All files" (*.*).
        std::vector<std::wstring> names, specs;
        if (request.kind != ChooseKind::OpenFolder) {
            for (const FileFilter& f : request.filters) {
                std::string spec;
                for (const std::string& p : f.patterns) spec += (spec.empty() ? "" : ";") + p;
                names.push_back(widen(f.name));
                specs.push_back(widen(spec));
            }
            names.push_back(L"All files");
            specs.push_back(L"*.*");
            std::vector<COMDLG_FILTERSPEC> table;
            for (std::size_t i = 0; i < names.size(); ++i)
                table.push_back({names[i].c_str(), specs[i].c_str()});
            dialog->SetFileTypes(UINT(table.size()), table.data());
            dialog->SetFileTypeIndex(1);
            if (save && !request.filters.empty() && !request.filters.front().patterns.empty()) {
                const std::string& p = request.filters.front().patterns.front();  // "*.json" -> "json"
                if (p.rfind("*.", 0) == 0) dialog->SetDefaultExtension(widen(p.substr(2)).c_str());
            }
        }
        if (!request.folder.empty()) {
            IShellItem* folder = nullptr;
            if (SUCCEEDED(SHCreateItemFromParsingName(widen(request.folder).c_str(), nullptr, IID_IShellItem,
                                                      reinterpret_cast<void**>(&folder)))) {
                dialog->SetFolder(folder);
                folder->Release();
            }
        }

        {
            StopWatcher watcher(GetCurrentThreadId(), stop);
            hr = dialog->Show(nullptr);
        }
        ChooseResult r;
        if (hr == HRESULT_FROM_WIN32(ERROR_CANCELLED) || stop.load()) {
            r = chooser_result(ChooseResult::Status::Cancelled);
        } else if (FAILED(hr)) {
            r = chooser_result(ChooseResult::Status::Failed, "",
                               "the file dialog failed: " + hresult_text(hr));
        } else {
            IShellItem* item = nullptr;
            PWSTR path = nullptr;
            if (SUCCEEDED(dialog->GetResult(&item)) && item &&
                SUCCEEDED(item->GetDisplayName(SIGDN_FILESYSPATH, &path)) && path) {
                std::string p = narrow(path);
                for (char& c : p)
                    if (c == '\\') c = '/';
                r = chooser_result(ChooseResult::Status::Chosen, p);
            } else {
                r = chooser_result(ChooseResult::Status::Failed, "",
                                   "the file dialog gave no file system path");
            }
            CoTaskMemFree(path);
            if (item) item->Release();
        }
        dialog->Release();
        return r;
    }
};

}  // namespace

std::vector<std::unique_ptr<FileChooser>> make_choosers(const std::string& preference, std::string* error) {
    std::vector<std::unique_ptr<FileChooser>> out;
    if (preference == "builtin") return out;
    if (!preference.empty() && preference != "auto" && preference != "windows" && error)
        *error = "ATTNVIZ_FILE_CHOOSER=" + preference + " is not one of auto, windows, builtin; using auto";
    out.push_back(std::make_unique<WindowsChooser>());
    return out;
}

}  // namespace attnviz::app
