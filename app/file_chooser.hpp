// The desktop's own file chooser, behind one small interface. File ▸ Open scene…, Save scene as… and
// Open model… (app/dialogs.cpp) ask a FileChooser for a path; the app never waits for it (the chooser
// runs on its own thread, ChooserRunner, and the frame loop polls for the answer).
//
// Backends, tried in order by `auto` (the first that is available answers):
//   portal   xdg-desktop-portal's org.freedesktop.portal.FileChooser on the session bus (libdbus):
//            GNOME, KDE and every Flatpak-aware desktop draw their own dialog for it
//   zenity   the GTK dialog tool, if it is on PATH
//   kdialog  the KDE dialog tool, if it is on PATH
// When none is available (a bare X server, CI), or ATTNVIZ_FILE_CHOOSER=builtin, the app uses its own
// path-entry popups, as before. Tests replace the backend: a chooser is any FileChooser, and
// `make_tool_chooser` / `make_portal_chooser` take the program or bus to use.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace attnviz::app {

enum class ChooseKind { OpenFile, SaveFile, OpenFolder };

struct FileFilter {
    std::string name;                   // "attnviz scenes"
    std::vector<std::string> patterns;  // {"*.json"}
};

struct ChooseRequest {
    ChooseKind kind = ChooseKind::OpenFile;
    std::string title;                // the dialog's title ("Open scene")
    std::string folder;               // where it starts ("" = the chooser's default)
    std::string file_name;            // SaveFile: the proposed name ("my-scene.json")
    std::vector<FileFilter> filters;  // the first is selected; an "All files" entry is added
};

struct ChooseResult {
    enum class Status {
        Chosen,       // `path` is what the user picked
        Cancelled,    // the user closed the dialog
        Unavailable,  // this backend cannot run here (no bus, no portal, no program): try the next
        Failed,       // it ran and broke: `message` says how (one line)
    };
    Status status = Status::Unavailable;
    std::string path;
    std::string message;
    std::string backend;  // "portal", "zenity", "kdialog" (who answered)
};

class FileChooser {
  public:
    virtual ~FileChooser() = default;
    virtual const char* name() const = 0;
    /// Shows the dialog and blocks until the user answers. Runs on a worker thread; returns
    /// Cancelled soon after `stop` becomes true (the app is quitting), closing the dialog: within
    /// about 0.1 s, or 1 s for a dialog program that ignores SIGTERM and is then killed.
    virtual ChooseResult choose(const ChooseRequest& request, const std::atomic<bool>& stop) = 0;
};

/// xdg-desktop-portal on the D-Bus bus at `bus_address` ("" = the session bus: DBUS_SESSION_BUS_ADDRESS,
/// else $XDG_RUNTIME_DIR/bus; never an X11 auto-launched bus). `parent_window` is the portal's parent
/// handle ("x11:1a00007", or "").
std::unique_ptr<FileChooser> make_portal_chooser(std::string bus_address = "",
                                                 std::string parent_window = "");
/// zenity or kdialog (`style`), run as `program` ("" = found on PATH at each call).
enum class ToolStyle { Zenity, Kdialog };
std::unique_ptr<FileChooser> make_tool_chooser(ToolStyle style, std::string program = "");

/// The backends named by `preference` (ATTNVIZ_FILE_CHOOSER): "auto" or "" = portal, zenity, kdialog;
/// one name = that one only; "builtin" = none (the app's own popups). An unknown name is an error
/// message in `*error` and means auto.
std::vector<std::unique_ptr<FileChooser>> make_choosers(const std::string& preference, std::string* error);

/// "file:///home/a%20b/x.json" -> "/home/a b/x.json"; "" for anything but a local file URI.
std::string path_from_file_uri(const std::string& uri);

/// Runs one chooser dialog at a time on its own thread and hands the answer back to the frame loop.
/// The backends are tried in order until one is available; `wake` (e.g. glfwPostEmptyEvent) is called
/// from the worker thread when the answer is ready, so an idle app wakes up to take it. The answer,
/// busy() turning false and the wake call happen together: once poll() returns the answer, busy() is
/// false and wake has returned. `wake` runs under the runner's lock, so it must not call the runner.
class ChooserRunner {
  public:
    ChooserRunner(std::vector<std::unique_ptr<FileChooser>> backends, std::function<void()> wake);
    ~ChooserRunner();  // closes an open dialog and joins
    ChooserRunner(const ChooserRunner&) = delete;
    ChooserRunner& operator=(const ChooserRunner&) = delete;

    /// False (nothing started) when there is no backend or a dialog is already open.
    bool start(ChooseRequest request, int purpose);
    bool busy() const { return running_.load(); }
    bool has_backends() const { return !backends_.empty(); }
    struct Answer {
        int purpose = 0;
        ChooseResult result;
    };
    /// The answer of the finished dialog, once (nullopt while it is open or when none was started).
    std::optional<Answer> poll();

  private:
    void join();
    std::vector<std::unique_ptr<FileChooser>> backends_;
    std::function<void()> wake_;
    std::thread thread_;
    std::atomic<bool> running_{false}, stop_{false};
    std::mutex mutex_;
    std::optional<Answer> answer_;  // guarded by mutex_
};

}  // namespace attnviz::app
