// app/file_chooser.hpp's backends on Linux: xdg-desktop-portal over libdbus, zenity, kdialog.
#include "app/file_chooser.hpp"

#include <dbus/dbus.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "core/utf8.hpp"

extern char** environ;

namespace attnviz::app {

namespace {

using Status = ChooseResult::Status;

ChooseResult result(Status status, std::string path = "", std::string message = "") {
    ChooseResult r;
    r.status = status;
    r.path = std::move(path);
    r.message = std::move(message);
    return r;
}

// Only the line end goes: a file name may end with a space.
std::string first_line(const std::string& s) {
    std::string out = s.substr(0, s.find('\n'));
    while (!out.empty() && out.back() == '\r') out.pop_back();
    return out;
}

// --- xdg-desktop-portal over libdbus ---------------------------------------------------------------

constexpr const char* kPortalName = "org.freedesktop.portal.Desktop";
constexpr const char* kPortalPath = "/org/freedesktop/portal/desktop";
constexpr const char* kChooserIface = "org.freedesktop.portal.FileChooser";
constexpr const char* kRequestIface = "org.freedesktop.portal.Request";

struct DBusErrorGuard {
    DBusError e;
    DBusErrorGuard() { dbus_error_init(&e); }
    ~DBusErrorGuard() { dbus_error_free(&e); }
    bool set() const { return dbus_error_is_set(&e); }
    std::string text() const { return set() ? std::string(e.message ? e.message : e.name) : std::string(); }
};

struct Message {
    DBusMessage* m = nullptr;
    explicit Message(DBusMessage* msg = nullptr) : m(msg) {}
    ~Message() {
        if (m) dbus_message_unref(m);
    }
    Message(const Message&) = delete;
    Message& operator=(const Message&) = delete;
};

// The session bus's address, without X11 auto-launch (which would start a bus of its own).
std::string session_bus_address() {
    if (const char* a = std::getenv("DBUS_SESSION_BUS_ADDRESS"); a && *a) return a;
    if (const char* rt = std::getenv("XDG_RUNTIME_DIR"); rt && *rt) {
        const std::string socket = std::string(rt) + "/bus";
        struct stat st {};
        if (::stat(socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return "unix:path=" + socket;
    }
    return "";
}

// libdbus aborts the process when a string it is given is not UTF-8, and a title or file name taken
// from a path need not be: such a string is left out of the request instead.
// (core/utf8.hpp refuses exactly what dbus_validate_utf8 refuses; NUL ends a C string, so it is
// refused too.)
bool valid_utf8(const std::string& s) {
    return s.find('\0') == std::string::npos && is_valid_utf8(s);
}

void append_variant_bool(DBusMessageIter* dict, const char* key, bool value) {
    DBusMessageIter entry, var;
    dbus_bool_t b = value ? TRUE : FALSE;
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "b", &var);
    dbus_message_iter_append_basic(&var, DBUS_TYPE_BOOLEAN, &b);
    dbus_message_iter_close_container(&entry, &var);
    dbus_message_iter_close_container(dict, &entry);
}

void append_variant_string(DBusMessageIter* dict, const char* key, const std::string& value) {
    if (!valid_utf8(value)) return;
    DBusMessageIter entry, var;
    const char* s = value.c_str();
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "s", &var);
    dbus_message_iter_append_basic(&var, DBUS_TYPE_STRING, &s);
    dbus_message_iter_close_container(&entry, &var);
    dbus_message_iter_close_container(dict, &entry);
}

// A path as the portal wants it: `ay`, NUL-terminated bytes (so any path, UTF-8 or not).
void append_variant_bytes(DBusMessageIter* dict, const char* key, const std::string& value) {
    DBusMessageIter entry, var, arr;
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &var);
    dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "y", &arr);
    const char* bytes = value.c_str();  // with its terminating NUL
    dbus_message_iter_append_fixed_array(&arr, DBUS_TYPE_BYTE, &bytes, int(value.size() + 1));
    dbus_message_iter_close_container(&var, &arr);
    dbus_message_iter_close_container(&entry, &var);
    dbus_message_iter_close_container(dict, &entry);
}

std::vector<FileFilter> with_all_files(std::vector<FileFilter> filters) {
    if (!filters.empty()) filters.push_back({"All files", {"*"}});
    return filters;
}

// filters: a(sa(us)) — each filter a name and (0 = glob, pattern) pairs. Filters and patterns that
// are not UTF-8 are left out (see valid_utf8).
void append_filters(DBusMessageIter* dict, const std::vector<FileFilter>& requested) {
    std::vector<FileFilter> filters;
    for (const FileFilter& f : requested) {
        if (!valid_utf8(f.name)) continue;
        FileFilter kept{f.name, {}};
        for (const std::string& p : f.patterns)
            if (valid_utf8(p)) kept.patterns.push_back(p);
        if (!kept.patterns.empty()) filters.push_back(std::move(kept));
    }
    filters = with_all_files(std::move(filters));
    if (filters.empty()) return;
    DBusMessageIter entry, var, arr;
    const char* key = "filters";
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, nullptr, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "a(sa(us))", &var);
    dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "(sa(us))", &arr);
    for (const FileFilter& f : filters) {
        DBusMessageIter st, pats;
        const char* name = f.name.c_str();
        dbus_message_iter_open_container(&arr, DBUS_TYPE_STRUCT, nullptr, &st);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name);
        dbus_message_iter_open_container(&st, DBUS_TYPE_ARRAY, "(us)", &pats);
        for (const std::string& p : f.patterns) {
            DBusMessageIter pair;
            const dbus_uint32_t glob = 0;
            const char* pattern = p.c_str();
            dbus_message_iter_open_container(&pats, DBUS_TYPE_STRUCT, nullptr, &pair);
            dbus_message_iter_append_basic(&pair, DBUS_TYPE_UINT32, &glob);
            dbus_message_iter_append_basic(&pair, DBUS_TYPE_STRING, &pattern);
            dbus_message_iter_close_container(&pats, &pair);
        }
        dbus_message_iter_close_container(&st, &pats);
        dbus_message_iter_close_container(&arr, &st);
    }
    dbus_message_iter_close_container(&var, &arr);
    dbus_message_iter_close_container(&entry, &var);
    dbus_message_iter_close_container(dict, &entry);
}

// Sends `call` and waits for its reply, reading the bus in 50 ms steps so that `stop` is honoured
// quickly (libdbus's blocking calls sit out their whole timeout). The reply, or nullptr: with `err`
// set on an error reply, a timeout or a lost bus, with `err` unset when stopped. Other messages read
// meanwhile are dropped; the portal's Response comes after its reply (a bus keeps each sender's order).
DBusMessage* call_and_wait(DBusConnection* c, DBusMessage* call, int timeout_ms,
                           const std::atomic<bool>& stop, DBusError* err) {
    dbus_uint32_t serial = 0;
    if (!dbus_connection_send(c, call, &serial)) {
        dbus_set_error_const(err, DBUS_ERROR_NO_MEMORY, "out of memory");
        return nullptr;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!stop.load()) {
        if (!dbus_connection_read_write(c, 50)) {
            dbus_set_error_const(err, DBUS_ERROR_DISCONNECTED, "the session bus closed");
            return nullptr;
        }
        while (DBusMessage* m = dbus_connection_pop_message(c)) {
            const int type = dbus_message_get_type(m);
            if ((type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) &&
                dbus_message_get_reply_serial(m) == serial) {
                if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN) return m;
                dbus_set_error_from_message(err, m);
                dbus_message_unref(m);
                return nullptr;
            }
            dbus_message_unref(m);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            dbus_set_error_const(err, DBUS_ERROR_NO_REPLY, "no reply in time");
            return nullptr;
        }
    }
    return nullptr;
}

// Response(u code, a{sv} results): the chosen path from results["uris"][0].
ChooseResult parse_response(DBusMessage* msg) {
    DBusMessageIter it;
    if (!dbus_message_iter_init(msg, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_UINT32)
        return result(Status::Failed, "", "the desktop's file chooser sent an answer attnviz cannot read");
    dbus_uint32_t code = 2;
    dbus_message_iter_get_basic(&it, &code);
    if (code == 1) return result(Status::Cancelled);
    if (code != 0) return result(Status::Failed, "", "the desktop's file chooser ended with an error");
    std::vector<std::string> uris;
    if (dbus_message_iter_next(&it) && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_ARRAY) {
        DBusMessageIter dict;
        dbus_message_iter_recurse(&it, &dict);
        for (; dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&dict)) {
            DBusMessageIter entry, var;
            dbus_message_iter_recurse(&dict, &entry);
            if (dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_STRING) continue;
            const char* key = nullptr;
            dbus_message_iter_get_basic(&entry, &key);
            if (std::strcmp(key, "uris") != 0 || !dbus_message_iter_next(&entry) ||
                dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_VARIANT)
                continue;
            dbus_message_iter_recurse(&entry, &var);
            if (dbus_message_iter_get_arg_type(&var) != DBUS_TYPE_ARRAY) continue;
            DBusMessageIter arr;
            dbus_message_iter_recurse(&var, &arr);
            for (; dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRING; dbus_message_iter_next(&arr)) {
                const char* u = nullptr;
                dbus_message_iter_get_basic(&arr, &u);
                uris.emplace_back(u);
            }
        }
    }
    if (uris.empty()) return result(Status::Cancelled);  // "OK" with nothing chosen
    const std::string path = path_from_file_uri(uris.front());
    if (path.empty())
        return result(Status::Failed, "",
                      "the file chooser gave " + uris.front() + ", which is not a local file");
    return result(Status::Chosen, path);
}

class PortalChooser final : public FileChooser {
  public:
    PortalChooser(std::string address, std::string parent)
        : address_(std::move(address)), parent_(std::move(parent)) {}
    const char* name() const override { return "portal"; }

    ChooseResult choose(const ChooseRequest& request, const std::atomic<bool>& stop) override {
        const std::string address = address_.empty() ? session_bus_address() : address_;
        if (address.empty()) return result(Status::Unavailable, "", "no session bus");
        DBusErrorGuard err;
        DBusConnection* c = dbus_connection_open_private(address.c_str(), &err.e);
        if (!c) return result(Status::Unavailable, "", "cannot reach the session bus: " + err.text());
        struct Close {
            DBusConnection* c;
            ~Close() {
                dbus_connection_close(c);
                dbus_connection_unref(c);
            }
        } close{c};
        dbus_connection_set_exit_on_disconnect(c, FALSE);
        // Hello by hand rather than dbus_bus_register, which blocks for up to 25 s ignoring `stop`.
        Message hello(
            dbus_message_new_method_call(DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "Hello"));
        if (!hello.m) return result(Status::Failed, "", "out of memory");
        Message welcome(call_and_wait(c, hello.m, 5000, stop, &err.e));
        const char* unique = nullptr;
        if (!welcome.m && !err.set()) return result(Status::Cancelled);
        if (!welcome.m ||
            !dbus_message_get_args(welcome.m, &err.e, DBUS_TYPE_STRING, &unique, DBUS_TYPE_INVALID) ||
            !dbus_bus_set_unique_name(c, unique))
            return result(Status::Unavailable, "", "cannot register on the session bus: " + err.text());

        // 10 s: the first call may start the portal (D-Bus activation).
        Message version_call(
            dbus_message_new_method_call(kPortalName, kPortalPath, "org.freedesktop.DBus.Properties", "Get"));
        if (!version_call.m) return result(Status::Failed, "", "out of memory");
        const char* iface = kChooserIface;
        const char* prop = "version";
        dbus_message_append_args(version_call.m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop,
                                 DBUS_TYPE_INVALID);
        Message version_reply(call_and_wait(c, version_call.m, 10000, stop, &err.e));
        if (!version_reply.m && !err.set()) return result(Status::Cancelled);
        const unsigned version = chooser_version(version_reply.m);
        if (version == 0) return result(Status::Unavailable, "", "no file chooser portal on the session bus");
        // Choosing a folder (and a start folder when opening) came with version 3 of the interface.
        if (request.kind == ChooseKind::OpenFolder && version < 3)
            return result(Status::Unavailable, "", "the file chooser portal cannot choose folders");

        // The request object's path is known before the call (handle_token), so the match for its
        // Response is in place before the dialog can possibly answer.
        std::string sender = dbus_bus_get_unique_name(c);
        if (!sender.empty() && sender[0] == ':') sender.erase(0, 1);
        for (char& ch : sender)
            if (ch == '.') ch = '_';
        std::random_device rd;
        const std::string token = "attnviz" + std::to_string(rd() % 1000000000u);
        std::string handle = std::string(kPortalPath) + "/request/" + sender + "/" + token;
        add_response_match(c, handle);

        Message call(
            dbus_message_new_method_call(kPortalName, kPortalPath, kChooserIface,
                                         request.kind == ChooseKind::SaveFile ? "SaveFile" : "OpenFile"));
        if (!call.m) return result(Status::Failed, "", "out of memory");
        DBusMessageIter args, dict;
        dbus_message_iter_init_append(call.m, &args);
        const char* parent = valid_utf8(parent_) ? parent_.c_str() : "";
        const char* title = valid_utf8(request.title) ? request.title.c_str() : "";
        dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &parent);
        dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &title);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &dict);
        append_variant_string(&dict, "handle_token", token);
        append_variant_bool(&dict, "modal", true);
        if (request.kind == ChooseKind::OpenFolder) append_variant_bool(&dict, "directory", true);
        if (request.kind != ChooseKind::OpenFolder && !request.filters.empty())
            append_filters(&dict, request.filters);
        if (request.kind == ChooseKind::SaveFile && !request.file_name.empty())
            append_variant_string(&dict, "current_name", request.file_name);
        if (!request.folder.empty() && (request.kind == ChooseKind::SaveFile || version >= 3))
            append_variant_bytes(&dict, "current_folder", request.folder);
        dbus_message_iter_close_container(&args, &dict);

        // A real portal answers at once with the request's handle; the dialog's answer comes later.
        Message reply(call_and_wait(c, call.m, 30000, stop, &err.e));
        if (!reply.m && !err.set()) {
            close_request(c, handle);  // the dialog may be open already, at the handle asked for
            return result(Status::Cancelled);
        }
        if (!reply.m) {
            const std::string name = err.set() && err.e.name ? err.e.name : "";
            if (name == DBUS_ERROR_SERVICE_UNKNOWN || name == DBUS_ERROR_UNKNOWN_METHOD ||
                name == DBUS_ERROR_UNKNOWN_INTERFACE || name == DBUS_ERROR_NAME_HAS_NO_OWNER)
                return result(Status::Unavailable, "", "no file chooser portal: " + err.text());
            return result(Status::Failed, "", "the desktop's file chooser did not answer: " + err.text());
        }
        const char* returned = nullptr;
        if (dbus_message_get_args(reply.m, &err.e, DBUS_TYPE_OBJECT_PATH, &returned, DBUS_TYPE_INVALID) &&
            handle != returned) {
            handle = returned;  // an old portal that ignores handle_token
            add_response_match(c, handle);
        }

        // The dialog is open: wait for its Response, checking `stop` ten times a second.
        while (dbus_connection_read_write(c, 100)) {
            for (;;) {
                Message msg(dbus_connection_pop_message(c));
                if (!msg.m) break;
                if (dbus_message_is_signal(msg.m, kRequestIface, "Response") &&
                    dbus_message_get_path(msg.m) && handle == dbus_message_get_path(msg.m)) {
                    ChooseResult r = parse_response(msg.m);
                    return r;
                }
            }
            if (stop.load()) {
                close_request(c, handle);
                return result(Status::Cancelled);
            }
        }
        return result(Status::Failed, "", "the session bus closed while the file chooser was open");
    }

  private:
    // The FileChooser interface's version property from the reply to Properties.Get; 0 when there is
    // no reply (no portal, or no FileChooser in it).
    static unsigned chooser_version(DBusMessage* reply) {
        DBusMessageIter it, var;
        if (!reply || !dbus_message_iter_init(reply, &it) ||
            dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_VARIANT)
            return 0;
        dbus_message_iter_recurse(&it, &var);
        if (dbus_message_iter_get_arg_type(&var) != DBUS_TYPE_UINT32) return 0;
        dbus_uint32_t v = 0;
        dbus_message_iter_get_basic(&var, &v);
        return unsigned(v);
    }
    static void close_request(DBusConnection* c, const std::string& handle) {
        Message close_call(dbus_message_new_method_call(kPortalName, handle.c_str(), kRequestIface, "Close"));
        if (!close_call.m) return;
        dbus_connection_send(c, close_call.m, nullptr);
        dbus_connection_flush(c);
    }
    static void add_response_match(DBusConnection* c, const std::string& handle) {
        const std::string rule = "type='signal',sender='" + std::string(kPortalName) + "',interface='" +
                                 kRequestIface + "',member='Response',path='" + handle + "'";
        dbus_bus_add_match(c, rule.c_str(), nullptr);  // nullptr error: sent without waiting
    }

    std::string address_, parent_;
};

// --- zenity / kdialog ----------------------------------------------------------------------------

std::string find_on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
}

std::string patterns_joined(const FileFilter& f, const char* separator) {
    std::string s;
    for (const std::string& p : f.patterns) s += (s.empty() ? "" : separator) + p;
    return s;
}

class ToolChooser final : public FileChooser {
  public:
    ToolChooser(ToolStyle style, std::string program) : style_(style), program_(std::move(program)) {}
    const char* name() const override { return style_ == ToolStyle::Zenity ? "zenity" : "kdialog"; }

    ChooseResult choose(const ChooseRequest& request, const std::atomic<bool>& stop) override {
        const std::string program = program_.empty() ? find_on_path(name()) : program_;
        if (program.empty() || ::access(program.c_str(), X_OK) != 0)
            return result(Status::Unavailable, "", std::string(name()) + " is not installed");
        std::vector<std::string> argv = arguments(program, request);

        int out[2], errp[2];
        if (::pipe2(out, O_CLOEXEC) != 0) return result(Status::Failed, "", std::strerror(errno));
        if (::pipe2(errp, O_CLOEXEC) != 0) {
            ::close(out[0]);
            ::close(out[1]);
            return result(Status::Failed, "", std::strerror(errno));
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
        std::vector<char*> cargv;
        for (std::string& a : argv) cargv.push_back(a.data());
        cargv.push_back(nullptr);
        pid_t pid = 0;
        const int rc = ::posix_spawn(&pid, program.c_str(), &fa, nullptr, cargv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(out[1]);
        ::close(errp[1]);
        if (rc != 0) {
            ::close(out[0]);
            ::close(errp[0]);
            return result(Status::Unavailable, "", "cannot run " + program + ": " + std::strerror(rc));
        }

        // Read both pipes until the program closes them, or until the app quits.
        std::string stdout_text, stderr_text;
        pollfd fds[2] = {{out[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
        int open_fds = 2;
        while (open_fds > 0 && !stop.load()) {
            const int n = ::poll(fds, 2, 100);
            if (n < 0 && errno != EINTR) break;
            for (int i = 0; i < 2; ++i) {
                if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                char buf[4096];
                const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
                if (got > 0) {
                    std::string& sink = i == 0 ? stdout_text : stderr_text;
                    if (sink.size() < (1u << 20)) sink.append(buf, std::size_t(got));
                } else if (got == 0 || errno != EINTR) {
                    ::close(fds[i].fd);
                    fds[i].fd = -1;
                    --open_fds;
                }
            }
        }
        for (pollfd& f : fds)
            if (f.fd >= 0) ::close(f.fd);
        if (stop.load()) {
            end_program(pid);
            return result(Status::Cancelled);
        }
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status))
            return result(Status::Failed, "", std::string(name()) + " stopped without an answer");
        const int code = WEXITSTATUS(status);
        const std::string why = complaint(stderr_text);
        // Exit 1 is the user's cancel, unless the program said why it could not show a dialog at all
        // (zenity without a display: exit 1 and "cannot open display" on stderr).
        if (code == 1 && (why.empty() || !stdout_text.empty())) return result(Status::Cancelled);
        if (code != 0) {
            return result(Status::Failed, "",
                          std::string(name()) + " failed (exit " + std::to_string(code) + ")" +
                              (why.empty() ? "" : ": " + why));
        }
        const std::string path = first_line(stdout_text);
        if (path.empty()) return result(Status::Cancelled);
        if (path[0] != '/')
            return result(Status::Failed, "",
                          std::string(name()) + " gave \"" + path + "\", not a full path");
        return result(Status::Chosen, path);
    }

  private:
    // SIGTERM, then SIGKILL if the program is still there a second later (one that ignores TERM must
    // not keep the app from quitting), and reaped either way.
    static void end_program(pid_t pid) {
        ::kill(pid, SIGTERM);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (std::chrono::steady_clock::now() < deadline) {
            const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
            if (r == pid || (r < 0 && errno != EINTR)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }

    // The first line of stderr that says something went wrong. GLib's "Gtk-Message: …" lines are
    // notes zenity prints on most runs ("GtkDialog mapped without a transient parent"), cancels too.
    // The stderr line that says the dialog could not be shown at all (no display; Qt without a
    // platform plugin), else "". Other lines are the usual noise of a dialog that did run (Gtk
    // messages, accessibility-bus and theme warnings): with exit 1 they still mean Cancel.
    static std::string complaint(const std::string& stderr_text) {
        std::istringstream lines(stderr_text);
        for (std::string line; std::getline(lines, line);) {
            line = first_line(line);
            std::string lower = line;
            std::transform(lower.begin(), lower.end(), lower.begin(),
                           [](unsigned char c) { return char(std::tolower(c)); });
            const bool no_display =
                lower.find("display") != std::string::npos &&
                (lower.find("cannot") != std::string::npos || lower.find("could not") != std::string::npos ||
                 lower.find("can't") != std::string::npos);
            if (no_display || lower.find("platform plugin") != std::string::npos) return line;
        }
        return "";
    }

    std::vector<std::string> arguments(const std::string& program, const ChooseRequest& r) const {
        std::string start = r.folder;
        if (!start.empty() && start.back() != '/') start += '/';
        if (r.kind == ChooseKind::SaveFile) start += r.file_name;
        const std::vector<FileFilter> filters = with_all_files(r.filters);
        std::vector<std::string> a = {program};
        if (style_ == ToolStyle::Zenity) {
            a.push_back("--file-selection");
            a.push_back("--title=" + r.title);
            if (r.kind == ChooseKind::OpenFolder) a.push_back("--directory");
            if (r.kind == ChooseKind::SaveFile) {
                a.push_back("--save");
                a.push_back("--confirm-overwrite");
            }
            if (!start.empty()) a.push_back("--filename=" + start);
            if (r.kind != ChooseKind::OpenFolder)
                for (const FileFilter& f : filters)
                    a.push_back("--file-filter=" + f.name + " | " + patterns_joined(f, " "));
        } else {
            a.push_back("--title");
            a.push_back(r.title);
            a.push_back(r.kind == ChooseKind::OpenFolder ? "--getexistingdirectory"
                        : r.kind == ChooseKind::SaveFile ? "--getsavefilename"
                                                         : "--getopenfilename");
            a.push_back(start.empty() ? "." : start);
            if (r.kind != ChooseKind::OpenFolder && !filters.empty()) {
                std::string spec;  // "Scenes (*.json)\nAll files (*)"
                for (const FileFilter& f : filters)
                    spec += (spec.empty() ? "" : "\n") + f.name + " (" + patterns_joined(f, " ") + ")";
                a.push_back(spec);
            }
        }
        return a;
    }

    ToolStyle style_;
    std::string program_;
};

}  // namespace

std::unique_ptr<FileChooser> make_portal_chooser(std::string bus_address, std::string parent_window) {
    return std::make_unique<PortalChooser>(std::move(bus_address), std::move(parent_window));
}

std::unique_ptr<FileChooser> make_tool_chooser(ToolStyle style, std::string program) {
    return std::make_unique<ToolChooser>(style, std::move(program));
}

std::vector<std::unique_ptr<FileChooser>> make_choosers(const std::string& preference, std::string* error) {
    std::vector<std::unique_ptr<FileChooser>> out;
    if (preference == "builtin") return out;
    const bool known = preference == "portal" || preference == "zenity" || preference == "kdialog";
    if (!known && !preference.empty() && preference != "auto" && error)
        *error = "ATTNVIZ_FILE_CHOOSER=" + preference +
                 " is not one of auto, portal, zenity, kdialog, builtin; using auto";
    if (!known || preference == "portal") out.push_back(make_portal_chooser());
    if (!known || preference == "zenity") out.push_back(make_tool_chooser(ToolStyle::Zenity));
    if (!known || preference == "kdialog") out.push_back(make_tool_chooser(ToolStyle::Kdialog));
    return out;
}

}  // namespace attnviz::app
