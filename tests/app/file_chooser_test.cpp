// The desktop file chooser (app/file_chooser.hpp), against stand-ins of what a desktop provides:
//  - a private dbus-daemon with a fake xdg-desktop-portal on it (this file's FakePortal, on its own
//    thread), which records what attnviz asked for and answers as a portal does: the request's
//    object path, then a Response signal with file:// URIs;
//  - fake `zenity` and `kdialog` programs (shell scripts) that record their arguments and print a path.
// Both prove the wire format (method, options, argument lists), the answers (chosen, cancelled,
// failed, unavailable) and that a dialog still open closes when the app quits.
#include <dbus/dbus.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "app/file_chooser.hpp"
#include "common/test_files.hpp"

extern char** environ;

namespace attnviz::app {
namespace {

using Status = ChooseResult::Status;
using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

// A dbus-daemon of the test's own: no service activation (a real portal installed on the machine is
// never started), gone at the end of the test.
class PrivateBus {
  public:
    explicit PrivateBus(const std::string& dir) {
        const std::string config = dir + "/bus.conf";
        write_file(config,
                   "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                   " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                   "<busconfig><type>session</type><listen>unix:dir=" +
                       dir +
                       "</listen><auth>EXTERNAL</auth>"
                       "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>"
                       "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n");
        int out[2];
        if (::pipe(out) != 0) return;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addclose(&fa, out[0]);
        std::string a0 = "dbus-daemon", a1 = "--config-file=" + config, a2 = "--nofork",
                    a3 = "--print-address=1";
        char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), nullptr};
        const int rc = ::posix_spawnp(&pid_, "dbus-daemon", &fa, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(out[1]);
        if (rc != 0) {
            ::close(out[0]);
            pid_ = 0;
            return;
        }
        char c;
        while (::read(out[0], &c, 1) == 1 && c != '\n') address_ += c;
        ::close(out[0]);
    }
    ~PrivateBus() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            int st;
            ::waitpid(pid_, &st, 0);
        }
    }
    const std::string& address() const { return address_; }

  private:
    pid_t pid_ = 0;
    std::string address_;
};

// What a portal got asked, and what it answers.
struct PortalCall {
    std::string method, parent, title, token, current_name, current_folder;
    bool modal = false, directory = false;
    std::vector<std::string> filter_names, filter_patterns;
};

// How far a FakePortal answers OpenFile / SaveFile: with the handle and then the Response (the user
// chose), with the handle only (the dialog stays open), or not at all (a hung portal).
enum class Answers { Response, HandleOnly, Nothing };

class FakePortal {
  public:
    FakePortal(std::string address, unsigned version, dbus_uint32_t code, std::vector<std::string> uris,
               Answers answers = Answers::Response)
        : address_(std::move(address)),
          version_(version),
          code_(code),
          uris_(std::move(uris)),
          answers_(answers) {
        DBusError err;
        dbus_error_init(&err);
        conn_ = dbus_connection_open_private(address_.c_str(), &err);
        if (conn_ && dbus_bus_register(conn_, &err))
            owned_ =
                dbus_bus_request_name(conn_, "org.freedesktop.portal.Desktop", DBUS_NAME_FLAG_DO_NOT_QUEUE,
                                      &err) == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER;
        dbus_error_free(&err);
        if (owned_) thread_ = std::thread([this] { serve(); });
    }
    ~FakePortal() {
        quit_ = true;
        if (thread_.joinable()) thread_.join();
        // Released and confirmed before the next FakePortal of the test asks for the name: a close
        // alone leaves it to the bus to notice, which may come after that request.
        if (owned_) dbus_bus_release_name(conn_, "org.freedesktop.portal.Desktop", nullptr);
        if (conn_) {
            dbus_connection_close(conn_);
            dbus_connection_unref(conn_);
        }
    }
    bool ready() const { return owned_; }
    PortalCall call() {
        std::lock_guard<std::mutex> lock(mutex_);
        return call_;
    }
    bool closed() {
        std::lock_guard<std::mutex> lock(mutex_);
        return closed_;
    }

  private:
    void serve() {
        while (!quit_ && dbus_connection_read_write(conn_, 20)) {
            while (DBusMessage* m = dbus_connection_pop_message(conn_)) {
                handle(m);
                dbus_message_unref(m);
            }
        }
    }
    void handle(DBusMessage* m) {
        if (dbus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get")) {
            DBusMessage* r = dbus_message_new_method_return(m);
            DBusMessageIter it, var;
            dbus_message_iter_init_append(r, &it);
            dbus_message_iter_open_container(&it, DBUS_TYPE_VARIANT, "u", &var);
            dbus_uint32_t v = version_;
            dbus_message_iter_append_basic(&var, DBUS_TYPE_UINT32, &v);
            dbus_message_iter_close_container(&it, &var);
            dbus_connection_send(conn_, r, nullptr);
            dbus_message_unref(r);
        } else if (dbus_message_is_method_call(m, "org.freedesktop.portal.FileChooser", "OpenFile") ||
                   dbus_message_is_method_call(m, "org.freedesktop.portal.FileChooser", "SaveFile")) {
            PortalCall c = parse_call(m);
            if (answers_ == Answers::Nothing) {
                std::lock_guard<std::mutex> lock(mutex_);
                call_ = c;
                return;
            }
            std::string sender = dbus_message_get_sender(m) + 1;  // ":1.5" -> "1_5"
            for (char& ch : sender)
                if (ch == '.') ch = '_';
            const std::string handle = "/org/freedesktop/portal/desktop/request/" + sender + "/" + c.token;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                call_ = c;
            }
            DBusMessage* r = dbus_message_new_method_return(m);
            const char* h = handle.c_str();
            dbus_message_append_args(r, DBUS_TYPE_OBJECT_PATH, &h, DBUS_TYPE_INVALID);
            dbus_connection_send(conn_, r, nullptr);
            dbus_message_unref(r);
            if (answers_ == Answers::Response) respond(handle, dbus_message_get_sender(m));
        } else if (dbus_message_is_method_call(m, "org.freedesktop.portal.Request", "Close")) {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        dbus_connection_flush(conn_);
    }
    void respond(const std::string& handle, const char* destination) {
        DBusMessage* s =
            dbus_message_new_signal(handle.c_str(), "org.freedesktop.portal.Request", "Response");
        dbus_message_set_destination(s, destination);
        DBusMessageIter it, dict, entry, var, arr;
        dbus_message_iter_init_append(s, &it);
        dbus_message_iter_append_basic(&it, DBUS_TYPE_UINT32, &code_);
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict);
        if (!uris_.empty()) {
            const char* key = "uris";
            dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
            dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
            dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "as", &var);
            dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "s", &arr);
            for (const std::string& u : uris_) {
                const char* p = u.c_str();
                dbus_message_iter_append_basic(&arr, DBUS_TYPE_STRING, &p);
            }
            dbus_message_iter_close_container(&var, &arr);
            dbus_message_iter_close_container(&entry, &var);
            dbus_message_iter_close_container(&dict, &entry);
        }
        dbus_message_iter_close_container(&it, &dict);
        dbus_connection_send(conn_, s, nullptr);
        dbus_message_unref(s);
    }
    static PortalCall parse_call(DBusMessage* m) {
        PortalCall c;
        c.method = dbus_message_get_member(m);
        DBusMessageIter it, dict;
        dbus_message_iter_init(m, &it);
        const char* s = nullptr;
        dbus_message_iter_get_basic(&it, &s);
        c.parent = s;
        dbus_message_iter_next(&it);
        dbus_message_iter_get_basic(&it, &s);
        c.title = s;
        dbus_message_iter_next(&it);
        dbus_message_iter_recurse(&it, &dict);
        for (; dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&dict)) {
            DBusMessageIter entry, var;
            dbus_message_iter_recurse(&dict, &entry);
            const char* key = nullptr;
            dbus_message_iter_get_basic(&entry, &key);
            dbus_message_iter_next(&entry);
            dbus_message_iter_recurse(&entry, &var);
            const std::string k = key;
            const int type = dbus_message_iter_get_arg_type(&var);
            if (type == DBUS_TYPE_STRING) {
                dbus_message_iter_get_basic(&var, &s);
                if (k == "handle_token") c.token = s;
                if (k == "current_name") c.current_name = s;
            } else if (type == DBUS_TYPE_BOOLEAN) {
                dbus_bool_t b = FALSE;
                dbus_message_iter_get_basic(&var, &b);
                (k == "modal" ? c.modal : c.directory) = b;
            } else if (k == "current_folder") {
                DBusMessageIter bytes;
                dbus_message_iter_recurse(&var, &bytes);
                const char* data = nullptr;
                int n = 0;
                dbus_message_iter_get_fixed_array(&bytes, &data, &n);
                c.current_folder.assign(data, std::size_t(n));  // keeps the NUL the portal expects
            } else if (k == "filters") {
                DBusMessageIter filters;
                dbus_message_iter_recurse(&var, &filters);
                for (; dbus_message_iter_get_arg_type(&filters) == DBUS_TYPE_STRUCT;
                     dbus_message_iter_next(&filters)) {
                    DBusMessageIter st, pats;
                    dbus_message_iter_recurse(&filters, &st);
                    dbus_message_iter_get_basic(&st, &s);
                    c.filter_names.emplace_back(s);
                    dbus_message_iter_next(&st);
                    dbus_message_iter_recurse(&st, &pats);
                    for (; dbus_message_iter_get_arg_type(&pats) == DBUS_TYPE_STRUCT;
                         dbus_message_iter_next(&pats)) {
                        DBusMessageIter pair;
                        dbus_message_iter_recurse(&pats, &pair);
                        dbus_uint32_t kind = 9;
                        dbus_message_iter_get_basic(&pair, &kind);
                        dbus_message_iter_next(&pair);
                        dbus_message_iter_get_basic(&pair, &s);
                        c.filter_patterns.push_back(std::to_string(kind) + ":" + s);
                    }
                }
            }
        }
        return c;
    }

    std::string address_;
    unsigned version_;
    dbus_uint32_t code_;
    std::vector<std::string> uris_;
    Answers answers_;
    DBusConnection* conn_ = nullptr;
    bool owned_ = false;
    std::atomic<bool> quit_{false};
    std::thread thread_;
    std::mutex mutex_;
    PortalCall call_;
    bool closed_ = false;
};

ChooseRequest scene_request() {
    ChooseRequest r;
    r.kind = ChooseKind::OpenFile;
    r.title = "Open scene";
    r.folder = "/tmp/start";
    r.filters = {{"attnviz scenes", {"*.json"}}};
    return r;
}

const std::atomic<bool> kNoStop{false};

class Portal : public ::testing::Test {
  protected:
    test::TempDir dir{"portal"};
    PrivateBus bus{dir.path};
    void SetUp() override {
        ASSERT_FALSE(bus.address().empty()) << "dbus-daemon (Debian: dbus-daemon) did not start";
    }
};

TEST_F(Portal, OpenFileSendsTitleFiltersFolderAndTokenAndReturnsThePath) {
    FakePortal portal(bus.address(), 4, 0, {"file:///tmp/a%20b/%E4%B8%AD%E6%96%87.json"});
    ASSERT_TRUE(portal.ready());
    const ChooseResult r = make_portal_chooser(bus.address(), "x11:1a")->choose(scene_request(), kNoStop);
    ASSERT_EQ(r.status, Status::Chosen) << r.message;
    EXPECT_EQ(r.path, "/tmp/a b/中文.json");
    const PortalCall c = portal.call();
    EXPECT_EQ(c.method, "OpenFile");
    EXPECT_EQ(c.parent, "x11:1a");
    EXPECT_EQ(c.title, "Open scene");
    EXPECT_EQ(c.token.rfind("attnviz", 0), 0u) << c.token;
    EXPECT_TRUE(c.modal);
    EXPECT_FALSE(c.directory);
    EXPECT_EQ(c.filter_names, (std::vector<std::string>{"attnviz scenes", "All files"}));
    EXPECT_EQ(c.filter_patterns, (std::vector<std::string>{"0:*.json", "0:*"}));
    EXPECT_EQ(c.current_folder, std::string("/tmp/start\0", 11));
}

TEST_F(Portal, CancelIsCancelledAndAnOkWithoutFilesToo) {
    {
        FakePortal portal(bus.address(), 4, 1, {});
        ASSERT_TRUE(portal.ready());
        EXPECT_EQ(make_portal_chooser(bus.address())->choose(scene_request(), kNoStop).status,
                  Status::Cancelled);
    }
    FakePortal portal(bus.address(), 4, 0, {});
    ASSERT_TRUE(portal.ready());
    EXPECT_EQ(make_portal_chooser(bus.address())->choose(scene_request(), kNoStop).status, Status::Cancelled);
}

TEST_F(Portal, SaveFileProposesTheNameInTheFolder) {
    FakePortal portal(bus.address(), 3, 0, {"file:///home/u/new.json"});
    ASSERT_TRUE(portal.ready());
    ChooseRequest req = scene_request();
    req.kind = ChooseKind::SaveFile;
    req.title = "Save scene as";
    req.file_name = "my-scene.json";
    const ChooseResult r = make_portal_chooser(bus.address())->choose(req, kNoStop);
    ASSERT_EQ(r.status, Status::Chosen) << r.message;
    EXPECT_EQ(r.path, "/home/u/new.json");
    const PortalCall c = portal.call();
    EXPECT_EQ(c.method, "SaveFile");
    EXPECT_EQ(c.current_name, "my-scene.json");
    EXPECT_EQ(c.current_folder, std::string("/tmp/start\0", 11));
}

TEST_F(Portal, FoldersNeedVersionThree) {
    ChooseRequest req;
    req.kind = ChooseKind::OpenFolder;
    req.title = "Open model";
    {
        FakePortal portal(bus.address(), 3, 0, {"file:///models/gpt2"});
        ASSERT_TRUE(portal.ready());
        const ChooseResult r = make_portal_chooser(bus.address())->choose(req, kNoStop);
        ASSERT_EQ(r.status, Status::Chosen) << r.message;
        EXPECT_EQ(r.path, "/models/gpt2");
        EXPECT_TRUE(portal.call().directory);
        EXPECT_TRUE(portal.call().filter_names.empty());
    }
    FakePortal old(bus.address(), 2, 0, {"file:///models/gpt2"});
    ASSERT_TRUE(old.ready());
    const ChooseResult r = make_portal_chooser(bus.address())->choose(req, kNoStop);
    EXPECT_EQ(r.status, Status::Unavailable);  // the next backend (zenity, kdialog) gets to try
    EXPECT_EQ(old.call().method, "");          // it was never asked
}

TEST_F(Portal, ARemoteUriIsOneLineNotAPath) {
    FakePortal portal(bus.address(), 4, 0, {"https://example.com/x.json"});
    ASSERT_TRUE(portal.ready());
    const ChooseResult r = make_portal_chooser(bus.address())->choose(scene_request(), kNoStop);
    EXPECT_EQ(r.status, Status::Failed);
    EXPECT_NE(r.message.find("https://example.com/x.json"), std::string::npos) << r.message;
    EXPECT_EQ(r.message.find('\n'), std::string::npos);
}

TEST_F(Portal, NoPortalOnTheBusOrNoBusIsUnavailable) {
    EXPECT_EQ(make_portal_chooser(bus.address())->choose(scene_request(), kNoStop).status,
              Status::Unavailable);
    EXPECT_EQ(make_portal_chooser("unix:path=" + dir.path + "/no-such-socket")
                  ->choose(scene_request(), kNoStop)
                  .status,
              Status::Unavailable);
}

// Sets `stop` once the portal got the call (at the latest after 10 s, so a broken test cannot hang);
// returns when it did.
std::thread quit_when_asked(FakePortal& portal, std::atomic<bool>& stop,
                            std::chrono::steady_clock::time_point& stopped_at) {
    return std::thread([&] {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (portal.call().method.empty() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(5ms);
        stopped_at = std::chrono::steady_clock::now();
        stop = true;
    });
}

TEST_F(Portal, QuittingClosesTheOpenDialog) {
    FakePortal portal(bus.address(), 4, 0, {"file:///x.json"}, Answers::HandleOnly);
    ASSERT_TRUE(portal.ready());
    std::atomic<bool> stop{false};
    std::chrono::steady_clock::time_point stopped_at;
    std::thread quitter = quit_when_asked(portal, stop, stopped_at);
    const ChooseResult r = make_portal_chooser(bus.address())->choose(scene_request(), stop);
    quitter.join();
    EXPECT_EQ(r.status, Status::Cancelled);
    EXPECT_EQ(portal.call().method, "OpenFile");
    for (int i = 0; i < 500 && !portal.closed(); ++i) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(portal.closed()) << "Request.Close was not sent";
}

TEST_F(Portal, QuittingWhileThePortalHasNotAnsweredTheCallIsQuick) {
    FakePortal portal(bus.address(), 4, 0, {"file:///x.json"}, Answers::Nothing);
    ASSERT_TRUE(portal.ready());
    std::atomic<bool> stop{false};
    std::chrono::steady_clock::time_point stopped_at;
    std::thread quitter = quit_when_asked(portal, stop, stopped_at);
    const ChooseResult r = make_portal_chooser(bus.address())->choose(scene_request(), stop);
    const auto returned_at = std::chrono::steady_clock::now();
    quitter.join();
    EXPECT_EQ(r.status, Status::Cancelled) << r.message;
    EXPECT_EQ(portal.call().method, "OpenFile");
    EXPECT_LT(returned_at - stopped_at, 4s);  // not the call's 30 s timeout (slack for a loaded machine)
    // The dialog may be open at the handle asked for (handle_token): it is closed there.
    for (int i = 0; i < 500 && !portal.closed(); ++i) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(portal.closed()) << "Request.Close was not sent";
}

TEST_F(Portal, StringsThatAreNotUtf8AreLeftOutNotACrash) {
    // libdbus aborts the process on such a string; a file name from disk need not be UTF-8.
    FakePortal portal(bus.address(), 4, 0, {"file:///tmp/start/x.json"});
    ASSERT_TRUE(portal.ready());
    ChooseRequest req = scene_request();
    req.kind = ChooseKind::SaveFile;
    req.title = "Save \xff scene";
    req.file_name = "caf\xe9.json";  // Latin-1
    req.folder = "/tmp/caf\xe9";     // sent as bytes (ay): kept
    req.filters = {{"bad \xc3(", {"*.json"}}, {"attnviz scenes", {"*.js\xffon", "*.json"}}};
    const ChooseResult r = make_portal_chooser(bus.address())->choose(req, kNoStop);
    ASSERT_EQ(r.status, Status::Chosen) << r.message;
    const PortalCall c = portal.call();
    EXPECT_EQ(c.method, "SaveFile");
    EXPECT_EQ(c.title, "");
    EXPECT_EQ(c.current_name, "");
    EXPECT_EQ(c.current_folder, std::string("/tmp/caf\xe9\0", 10));
    EXPECT_EQ(c.filter_names, (std::vector<std::string>{"attnviz scenes", "All files"}));
    EXPECT_EQ(c.filter_patterns, (std::vector<std::string>{"0:*.json", "0:*"}));
}

// A fake dialog program: records its arguments (one per line) in ARGS, prints OUT, exits with CODE.
std::string fake_tool(const test::TempDir& dir, const std::string& name, const std::string& out, int code,
                      const std::string& err = "", bool hang = false) {
    const std::string path = dir.path + "/" + name;
    write_file(path, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + dir.path + "/" +
                         name + ".args'\n" + (hang ? "exec sleep 30\n" : "") + "printf '%s' '" + out +
                         "'\nprintf '%s' '" + err + "' >&2\nexit " + std::to_string(code) + "\n");
    ::chmod(path.c_str(), 0755);
    return path;
}

std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> out;
    std::istringstream in(read_file(path));
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

TEST(ToolChooser, ZenityOpenArgumentsAndAnswer) {
    test::TempDir dir("zenity");
    const std::string z = fake_tool(dir, "zenity", "/home/u/my scene.json\n", 0);
    const ChooseResult r = make_tool_chooser(ToolStyle::Zenity, z)->choose(scene_request(), kNoStop);
    ASSERT_EQ(r.status, Status::Chosen) << r.message;
    EXPECT_EQ(r.path, "/home/u/my scene.json");
    EXPECT_EQ(
        lines_of(dir.path + "/zenity.args"),
        (std::vector<std::string>{"--file-selection", "--title=Open scene", "--filename=/tmp/start/",
                                  "--file-filter=attnviz scenes | *.json", "--file-filter=All files | *"}));
}

TEST(ToolChooser, ZenitySaveAndFolderArguments) {
    test::TempDir dir("zenity");
    const std::string z = fake_tool(dir, "zenity", "/tmp/start/x.json\n", 0);
    ChooseRequest save = scene_request();
    save.kind = ChooseKind::SaveFile;
    save.title = "Save scene as";
    save.file_name = "my-scene.json";
    ASSERT_EQ(make_tool_chooser(ToolStyle::Zenity, z)->choose(save, kNoStop).status, Status::Chosen);
    const auto a = lines_of(dir.path + "/zenity.args");
    ASSERT_GE(a.size(), 5u);
    EXPECT_EQ(a[2], "--save");
    EXPECT_EQ(a[3], "--confirm-overwrite");
    EXPECT_EQ(a[4], "--filename=/tmp/start/my-scene.json");

    ChooseRequest folder;
    folder.kind = ChooseKind::OpenFolder;
    folder.title = "Open model";
    ASSERT_EQ(make_tool_chooser(ToolStyle::Zenity, z)->choose(folder, kNoStop).status, Status::Chosen);
    EXPECT_EQ(lines_of(dir.path + "/zenity.args"),
              (std::vector<std::string>{"--file-selection", "--title=Open model", "--directory"}));
}

TEST(ToolChooser, KdialogArguments) {
    test::TempDir dir("kdialog");
    const std::string k = fake_tool(dir, "kdialog", "/srv/s.json\n", 0);
    ChooseRequest save = scene_request();
    save.kind = ChooseKind::SaveFile;
    save.title = "Save scene as";
    save.file_name = "my-scene.json";
    const ChooseResult r = make_tool_chooser(ToolStyle::Kdialog, k)->choose(save, kNoStop);
    ASSERT_EQ(r.status, Status::Chosen) << r.message;
    EXPECT_EQ(r.path, "/srv/s.json");
    EXPECT_EQ(
        lines_of(dir.path + "/kdialog.args"),
        (std::vector<std::string>{"--title", "Save scene as", "--getsavefilename", "/tmp/start/my-scene.json",
                                  "attnviz scenes (*.json)", "All files (*)"}));
}

TEST(ToolChooser, CancelFailureAndNonsenseAnswers) {
    test::TempDir dir("tools");
    EXPECT_EQ(make_tool_chooser(ToolStyle::Zenity, fake_tool(dir, "c", "", 1))
                  ->choose(scene_request(), kNoStop)
                  .status,
              Status::Cancelled);
    const ChooseResult failed =
        make_tool_chooser(ToolStyle::Zenity, fake_tool(dir, "f", "", 5, "cannot open display\nmore"))
            ->choose(scene_request(), kNoStop);
    EXPECT_EQ(failed.status, Status::Failed);
    EXPECT_EQ(failed.message, "zenity failed (exit 5): cannot open display");
    const ChooseResult relative = make_tool_chooser(ToolStyle::Kdialog, fake_tool(dir, "r", "x.json\n", 0))
                                      ->choose(scene_request(), kNoStop);
    EXPECT_EQ(relative.status, Status::Failed);
    EXPECT_NE(relative.message.find("not a full path"), std::string::npos) << relative.message;
    EXPECT_EQ(
        make_tool_chooser(ToolStyle::Zenity, dir.path + "/missing")->choose(scene_request(), kNoStop).status,
        Status::Unavailable);
}

TEST(ToolChooser, ANameMayEndWithASpace) {
    test::TempDir dir("zenity");
    const ChooseResult r = make_tool_chooser(ToolStyle::Zenity, fake_tool(dir, "zenity", "/home/u/x \r\n", 0))
                               ->choose(scene_request(), kNoStop);
    ASSERT_EQ(r.status, Status::Chosen) << r.message;
    EXPECT_EQ(r.path, "/home/u/x ");
}

TEST(ToolChooser, ExitOneWithAComplaintIsAFailureNotACancel) {
    test::TempDir dir("tools");
    // zenity without a display exits 1, as a cancel does, but says why on stderr.
    const ChooseResult failed =
        make_tool_chooser(ToolStyle::Zenity, fake_tool(dir, "nodisplay", "", 1,
                                                       "(zenity:42): Gtk-WARNING **: cannot open display: "))
            ->choose(scene_request(), kNoStop);
    EXPECT_EQ(failed.status, Status::Failed);
    EXPECT_EQ(failed.message, "zenity failed (exit 1): (zenity:42): Gtk-WARNING **: cannot open display: ");
    // The note zenity prints on most runs is no complaint: still the user's cancel.
    EXPECT_EQ(make_tool_chooser(ToolStyle::Zenity,
                                fake_tool(dir, "note", "", 1,
                                          "Gtk-Message: 10:00:00.000: GtkDialog mapped without a transient "
                                          "parent. This is discouraged.\n"))
                  ->choose(scene_request(), kNoStop)
                  .status,
              Status::Cancelled);
    // Nor are the warnings a dialog that did run prints (the accessibility bus, themes).
    EXPECT_EQ(
        make_tool_chooser(
            ToolStyle::Zenity,
            fake_tool(dir, "warnings", "", 1,
                      "(zenity:7): dbind-WARNING **: 10:00:00.000: AT-SPI: Could not obtain desktop path or "
                      "name\n"
                      "(zenity:7): Gtk-WARNING **: Theme parsing error: gtk.css:1:2\n"))
            ->choose(scene_request(), kNoStop)
            .status,
        Status::Cancelled);
}

TEST(ToolChooser, QuittingKillsADialogThatIgnoresTerm) {
    test::TempDir dir("stubborn");
    const std::string z = dir.path + "/zenity";
    // TERM is ignored by the shell and by the `sleep` it waits for (which also holds the pipes open).
    write_file(z, "#!/bin/sh\ntrap '' TERM\ntouch '" + dir.path + "/started'\nsleep 5\n");
    ::chmod(z.c_str(), 0755);
    std::atomic<bool> stop{false};
    std::chrono::steady_clock::time_point stopped_at;
    std::thread quitter([&] {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (::access((dir.path + "/started").c_str(), F_OK) != 0 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(5ms);
        stopped_at = std::chrono::steady_clock::now();
        stop = true;
    });
    const ChooseResult r = make_tool_chooser(ToolStyle::Zenity, z)->choose(scene_request(), stop);
    const auto returned_at = std::chrono::steady_clock::now();
    quitter.join();
    EXPECT_EQ(r.status, Status::Cancelled);
    EXPECT_LT(returned_at - stopped_at,
              4s);  // 1 s for TERM, then KILL; not the 5 s of the sleep (slack: a loaded machine)
}

TEST(ToolChooser, QuittingEndsAnOpenDialog) {
    test::TempDir dir("hang");
    const std::string z = fake_tool(dir, "zenity", "/x.json", 0, "", /*hang=*/true);
    std::atomic<bool> stop{false};
    std::thread quitter([&] {
        std::this_thread::sleep_for(100ms);
        stop = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    const ChooseResult r = make_tool_chooser(ToolStyle::Zenity, z)->choose(scene_request(), stop);
    quitter.join();
    EXPECT_EQ(r.status, Status::Cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);  // not the 30 s the dialog would stay open
}

TEST(ChooserRunner, TriesBackendsInOrderAndWakesTheLoop) {
    test::TempDir dir("runner");
    std::vector<std::unique_ptr<FileChooser>> chain;
    chain.push_back(make_portal_chooser("unix:path=" + dir.path + "/none"));     // unavailable
    chain.push_back(make_tool_chooser(ToolStyle::Kdialog, dir.path + "/none"));  // unavailable
    chain.push_back(make_tool_chooser(ToolStyle::Zenity, fake_tool(dir, "zenity", "/picked.json\n", 0)));
    std::atomic<int> wakes{0};
    ChooserRunner runner(std::move(chain), [&] { ++wakes; });
    ASSERT_TRUE(runner.has_backends());
    ASSERT_TRUE(runner.start(scene_request(), 7));
    std::optional<ChooserRunner::Answer> a;
    for (int i = 0; i < 2000 && !a; ++i) {
        a = runner.poll();
        if (!a) std::this_thread::sleep_for(5ms);
    }
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->purpose, 7);
    EXPECT_EQ(a->result.status, Status::Chosen);
    EXPECT_EQ(a->result.path, "/picked.json");
    EXPECT_EQ(a->result.backend, "zenity");
    EXPECT_EQ(wakes.load(), 1);
    EXPECT_FALSE(runner.poll().has_value());        // handed over once
    EXPECT_TRUE(runner.start(scene_request(), 8));  // and ready for the next dialog
}

TEST(ChooserRunner, OneDialogAtATimeAndNoneWithoutBackends) {
    test::TempDir dir("runner");
    std::vector<std::unique_ptr<FileChooser>> chain;
    chain.push_back(make_tool_chooser(ToolStyle::Zenity, fake_tool(dir, "zenity", "/x.json", 0, "", true)));
    {
        ChooserRunner runner(std::move(chain), nullptr);
        ASSERT_TRUE(runner.start(scene_request(), 1));
        EXPECT_TRUE(runner.busy());
        EXPECT_FALSE(runner.start(scene_request(), 2));
    }  // quits with the dialog open: the destructor ends it (well under its 30 s)
    ChooserRunner none({}, nullptr);
    EXPECT_FALSE(none.has_backends());
    EXPECT_FALSE(none.start(scene_request(), 1));
}

TEST(FileChooser, PreferenceNamesTheBackends) {
    std::string err;
    auto names = [](const std::vector<std::unique_ptr<FileChooser>>& v) {
        std::vector<std::string> out;
        for (const auto& c : v) out.emplace_back(c->name());
        return out;
    };
    EXPECT_EQ(names(make_choosers("", &err)), (std::vector<std::string>{"portal", "zenity", "kdialog"}));
    EXPECT_EQ(names(make_choosers("auto", &err)), (std::vector<std::string>{"portal", "zenity", "kdialog"}));
    EXPECT_EQ(names(make_choosers("kdialog", &err)), (std::vector<std::string>{"kdialog"}));
    EXPECT_TRUE(make_choosers("builtin", &err).empty());
    EXPECT_TRUE(err.empty()) << err;
    EXPECT_EQ(names(make_choosers("gtk", &err)).size(), 3u);
    EXPECT_EQ(err,
              "ATTNVIZ_FILE_CHOOSER=gtk is not one of auto, portal, zenity, kdialog, builtin; using auto");
}

TEST(FileChooser, FileUris) {
    EXPECT_EQ(path_from_file_uri("file:///home/a%20b/x.json"), "/home/a b/x.json");
    EXPECT_EQ(path_from_file_uri("file://localhost/srv/m"), "/srv/m");
    EXPECT_EQ(path_from_file_uri("file:///%E4%B8%AD"), "/中");
    EXPECT_EQ(path_from_file_uri("file:///bad%2"), "");
    EXPECT_EQ(path_from_file_uri("file:///nul%00x"), "");
    EXPECT_EQ(path_from_file_uri("file://host/x"), "");
    EXPECT_EQ(path_from_file_uri("https://x/y"), "");
    EXPECT_EQ(path_from_file_uri("/plain/path"), "");
}

}  // namespace
}  // namespace attnviz::app
