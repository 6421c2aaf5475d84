#include "app/script.hpp"
#include "app/clock.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/error.hpp"

namespace attnviz::app {

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::vector<std::string> words(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// ${NAME} -> the environment variable (empty if unset).
std::string expand_env(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
            const auto close = s.find('}', i + 2);
            if (close != std::string::npos) {
                const char* v = std::getenv(s.substr(i + 2, close - i - 2).c_str());
                out += v ? v : "";
                i = close;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

const std::vector<std::string>& known_ops() {
    static const std::vector<std::string> ops = {
        "wait",  "expect", "let",      "mark", "key",    "type",          "move",
        "click", "down",   "up",       "drag", "scroll", "frames",        "screenshot",
        "quit",  "window", "ui_scale", "lab",  "drop",   "clipboard_save"};
    return ops;
}

struct KeyName {
    const char* name;
    int key;
};
constexpr KeyName kKeys[] = {
    {"right", GLFW_KEY_RIGHT},  {"left", GLFW_KEY_LEFT},           {"up", GLFW_KEY_UP},
    {"down", GLFW_KEY_DOWN},    {"home", GLFW_KEY_HOME},           {"end", GLFW_KEY_END},
    {"return", GLFW_KEY_ENTER}, {"enter", GLFW_KEY_ENTER},         {"escape", GLFW_KEY_ESCAPE},
    {"tab", GLFW_KEY_TAB},      {"backspace", GLFW_KEY_BACKSPACE}, {"delete", GLFW_KEY_DELETE},
    {"space", GLFW_KEY_SPACE},  {"pageup", GLFW_KEY_PAGE_UP},      {"pagedown", GLFW_KEY_PAGE_DOWN},
};

// "ctrl+shift+o" -> (GLFW key, modifier keys to hold, GLFW_MOD_* bits); false if unknown.
bool parse_key(const std::string& spec, int* key, std::vector<int>* modifier_keys, int* mods) {
    std::string lower = spec;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    *mods = 0;
    modifier_keys->clear();
    std::size_t start = 0;
    for (;;) {
        const auto plus = lower.find('+', start);
        if (plus == std::string::npos || plus == lower.size() - 1) break;
        const std::string m = lower.substr(start, plus - start);
        if (m == "ctrl" || m == "control") {
            *mods |= GLFW_MOD_CONTROL;
            modifier_keys->push_back(GLFW_KEY_LEFT_CONTROL);
        } else if (m == "shift") {
            *mods |= GLFW_MOD_SHIFT;
            modifier_keys->push_back(GLFW_KEY_LEFT_SHIFT);
        } else if (m == "alt") {
            *mods |= GLFW_MOD_ALT;
            modifier_keys->push_back(GLFW_KEY_LEFT_ALT);
        } else {
            return false;
        }
        start = plus + 1;
    }
    const std::string k = lower.substr(start);
    if (k.size() == 1 && k[0] >= 'a' && k[0] <= 'z') {
        *key = GLFW_KEY_A + (k[0] - 'a');
        return true;
    }
    if (k.size() == 1 && k[0] >= '0' && k[0] <= '9') {
        *key = GLFW_KEY_0 + (k[0] - '0');
        return true;
    }
    if (k.size() >= 2 && k[0] == 'f') {
        const int n = std::atoi(k.c_str() + 1);
        if (n >= 1 && n <= 25 && k == "f" + std::to_string(n)) {
            *key = GLFW_KEY_F1 + n - 1;
            return true;
        }
    }
    for (const KeyName& kn : kKeys)
        if (k == kn.name) {
            *key = kn.key;
            return true;
        }
    return false;
}

const nlohmann::json* lookup(const nlohmann::json& state, const std::string& path) {
    const nlohmann::json* v = &state;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto dot = path.find('.', start);
        const std::string part =
            path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!v->is_object()) return nullptr;
        const auto it = v->find(part);
        if (it == v->end()) return nullptr;
        v = &*it;
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return v;
}

nlohmann::json parse_value(const std::string& text, const std::map<std::string, nlohmann::json>& vars) {
    if (!text.empty() && text[0] == '$') {
        const auto it = vars.find(text.substr(1));
        if (it == vars.end()) throw Error("no value saved as '" + text.substr(1) + "' (use: let NAME FIELD)");
        return it->second;
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) return j;
    return nlohmann::json(text);  // a bare word: a string
}

bool compare(const nlohmann::json& a, const std::string& op, const nlohmann::json& b) {
    if (op == "==") return a == b || (a.is_number() && b.is_number() && a.get<double>() == b.get<double>());
    if (op == "!=") return !compare(a, "==", b);
    if (op == "~") {
        if (a.is_string() && b.is_string())
            return a.get<std::string>().find(b.get<std::string>()) != std::string::npos;
        if (a.is_array()) return std::find(a.begin(), a.end(), b) != a.end();
        return false;
    }
    if (op == "^=") {
        return a.is_string() && b.is_string() && a.get<std::string>().rfind(b.get<std::string>(), 0) == 0;
    }
    if (!a.is_number() || !b.is_number()) return false;
    const double x = a.get<double>(), y = b.get<double>();
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    throw Error("unknown comparison '" + op + "' (use == != < <= > >= ~ ^=)");
}

}  // namespace

std::vector<ScriptStep> parse_script(const std::string& text, const std::string& name) {
    std::vector<ScriptStep> steps;
    std::istringstream in(text);
    std::string raw;
    int line_no = 0;
    while (std::getline(in, raw)) {
        ++line_no;
        std::string line = trim(raw);
        if (line.empty() || line[0] == '#') continue;
        ScriptStep step;
        step.line = line_no;
        const auto space = line.find_first_of(" \t");
        step.op = line.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : trim(line.substr(space));
        const auto& ops = known_ops();
        if (std::find(ops.begin(), ops.end(), step.op) == ops.end())
            throw Error(name + ":" + std::to_string(line_no) + ": unknown step '" + step.op + "'");
        if (step.op == "type" || step.op == "wait" || step.op == "expect")
            step.args = {rest};
        else
            step.args = words(rest);
        auto need = [&](std::size_t lo, std::size_t hi) {
            if (step.args.size() < lo || step.args.size() > hi)
                throw Error(name + ":" + std::to_string(line_no) + ": '" + step.op + "' takes " +
                            std::to_string(lo) + (hi != lo ? " to " + std::to_string(hi) : "") +
                            " argument(s)");
        };
        if (step.op == "key") {
            need(1, 1);
            int key = 0, mods = 0;
            std::vector<int> mk;
            if (!parse_key(step.args[0], &key, &mk, &mods))
                throw Error(name + ":" + std::to_string(line_no) + ": unknown key '" + step.args[0] + "'");
        } else if (step.op == "let") {
            need(2, 2);
        } else if (step.op == "frames" || step.op == "scroll") {
            need(1, 1);
        } else if (step.op == "screenshot") {
            need(1, 1);
        } else if (step.op == "window") {
            need(2, 2);
            const int w = std::atoi(step.args[0].c_str()), h = std::atoi(step.args[1].c_str());
            if (w < 320 || h < 240 || w > 16384 || h > 16384)
                throw Error(name + ":" + std::to_string(line_no) +
                            ": 'window' takes a width and a height in pixels (at least 320 240)");
        } else if (step.op == "lab" || step.op == "clipboard_save") {
            need(1, 1);
        } else if (step.op == "drop") {
            need(1, 16);
        } else if (step.op == "ui_scale") {
            need(1, 1);
            const double s = std::atof(step.args[0].c_str());
            if (!(s >= 0.5 && s <= 3.0))
                throw Error(name + ":" + std::to_string(line_no) +
                            ": 'ui_scale' takes a scale from 0.5 to 3");
        } else if (step.op == "move" || step.op == "click") {
            need(2, 4);
        } else if (step.op == "drag") {
            need(3, 5);
        } else if ((step.op == "wait" || step.op == "expect") && rest.empty()) {
            throw Error(name + ":" + std::to_string(line_no) + ": '" + step.op + "' needs a condition");
        }
        steps.push_back(std::move(step));
    }
    return steps;
}

bool eval_conditions(const std::string& conditions, const nlohmann::json& state,
                     const std::map<std::string, nlohmann::json>& vars) {
    std::size_t start = 0;
    for (;;) {
        const auto amp = conditions.find("&&", start);
        const std::string cond =
            trim(conditions.substr(start, amp == std::string::npos ? std::string::npos : amp - start));
        // FIELD OP VALUE (VALUE is the rest, so strings may hold spaces).
        const auto s1 = cond.find_first_of(" \t");
        if (s1 == std::string::npos) throw Error("condition '" + cond + "' is not FIELD OP VALUE");
        const std::string field = cond.substr(0, s1);
        const std::string after = trim(cond.substr(s1));
        const auto s2 = after.find_first_of(" \t");
        if (s2 == std::string::npos) throw Error("condition '" + cond + "' is not FIELD OP VALUE");
        const std::string op = after.substr(0, s2);
        const nlohmann::json value = parse_value(trim(after.substr(s2)), vars);
        const nlohmann::json* actual = lookup(state, field);
        if (!actual || !compare(*actual, op, value)) return false;
        if (amp == std::string::npos) return true;
        start = amp + 2;
    }
}

ScriptPlayer::ScriptPlayer(std::vector<ScriptStep> steps, std::string name)
    : steps_(std::move(steps)), name_(std::move(name)) {}

std::string ScriptPlayer::take_screenshot_request() {
    std::string p;
    p.swap(screenshot_path_);
    return p;
}

std::string ScriptPlayer::take_lab_request() {
    std::string r;
    r.swap(lab_request_);
    return r;
}

float ScriptPlayer::take_ui_scale_request() {
    const float s = ui_scale_request_;
    ui_scale_request_ = 0;
    return s;
}

void ScriptPlayer::fail(const ScriptStep& step, const std::string& why, const nlohmann::json& state) {
    failure_ = name_ + ":" + std::to_string(step.line) + ": " + step.op +
               (step.args.empty() ? "" : " " + step.args[0]) + (step.args.size() > 1 ? " ..." : "") + ": " +
               why + "\n  state: " + state.dump();
    done_ = true;
}

// A widget not drawn yet (its panel appears a frame or two after the state that led to it) is
// waited for, as a hand waits to see a button before pressing it; still absent after 10 s, the step
// fails.
void ScriptPlayer::widget_absent(const ScriptStep& step, const nlohmann::json& state) {
    if (wait_started_ < 0) wait_started_ = now_seconds();
    if (now_seconds() - wait_started_ <= 10.0) return;
    wait_started_ = -1;
    fail(step, "the widget is not on screen (waited 10 s)", state);
}

bool ScriptPlayer::resolve_target(const ScriptStep& step, std::size_t first, const nlohmann::json& state,
                                  float* x, float* y) {
    const auto& a = step.args;
    try {
        if (a.size() > first && a[first] == "widget") {
            if (a.size() < first + 4) throw Error("widget targets are: widget NAME FX FY");
            const nlohmann::json* r = lookup(state, "widgets." + a[first + 1]);
            if (!r || !r->is_array() || r->size() != 4) return false;  // not drawn (yet)
            const float fx = std::stof(a[first + 2]), fy = std::stof(a[first + 3]);
            *x = (*r)[0].get<float>() + fx * (*r)[2].get<float>();
            *y = (*r)[1].get<float>() + fy * (*r)[3].get<float>();
            return true;
        }
        if (a.size() < first + 2) throw Error("a target is X Y or widget NAME FX FY");
        *x = std::stof(a[first]);
        *y = std::stof(a[first + 1]);
        return true;
    } catch (const std::logic_error&) {
        throw Error("a target is X Y or widget NAME FX FY (numbers)");
    }
}

void ScriptPlayer::before_frame(GLFWwindow* window, const nlohmann::json& state_in, bool updating) {
    window_ = window;
    if (done_) return;
    ++frames_;
    if (updating) ++frames_updating_;
    nlohmann::json state = state_in;
    state["frames"] = frames_;
    state["frames_updating"] = frames_updating_;

    // Last frame's key presses are released now: every press is seen by ImGui for exactly one frame.
    for (auto it = keys_to_release_.rbegin(); it != keys_to_release_.rend(); ++it)
        ImGui_ImplGlfw_KeyCallback(window, *it, 0, GLFW_RELEASE, 0);
    keys_to_release_.clear();
    if (release_button_next_) {
        button_down_ = false;
        release_button_next_ = false;
    }
    if (frames_left_ > 0 && --frames_left_ > 0) return;
    if (drag_frames_left_ > 0) {
        --drag_frames_left_;
        const float t = 1.0f - float(drag_frames_left_) / float(drag_frames_total_);
        mouse_x_ = drag_from_x_ + (drag_to_x_ - drag_from_x_) * t;
        mouse_y_ = drag_from_y_ + (drag_to_y_ - drag_from_y_) * t;
        if (drag_frames_left_ > 0) return;
    }

    while (pc_ < steps_.size()) {
        const ScriptStep& step = steps_[pc_];
        try {
            if (step.op == "wait") {
                std::string cond = expand_env(step.args[0]);
                double timeout = 120.0;
                const auto t = cond.rfind(" timeout ");
                if (t != std::string::npos) {
                    timeout = std::stod(cond.substr(t + 9));
                    cond = cond.substr(0, t);
                }
                if (wait_started_ < 0) wait_started_ = now_seconds();
                if (!eval_conditions(cond, state, vars_)) {
                    if (now_seconds() - wait_started_ > timeout)
                        fail(step, "still false after " + std::to_string(int(timeout)) + " s", state);
                    return;  // draw another frame and look again
                }
                wait_started_ = -1;
            } else if (step.op == "expect") {
                if (!eval_conditions(expand_env(step.args[0]), state, vars_)) {
                    fail(step, "is false", state);
                    return;
                }
            } else if (step.op == "let") {
                const nlohmann::json* v = lookup(state, step.args[1]);
                if (!v) {
                    fail(step, "the state has no field '" + step.args[1] + "'", state);
                    return;
                }
                vars_[step.args[0]] = *v;
            } else if (step.op == "mark") {
                frames_ = frames_updating_ = 0;
            } else if (step.op == "key") {
                int key = 0, mods = 0;
                std::vector<int> modifier_keys;
                parse_key(step.args[0], &key, &modifier_keys, &mods);
                // As a keyboard sends them: modifiers down, the key down (with the modifier bits);
                // all released on the next frame, in reverse order.
                for (int mk : modifier_keys) {
                    ImGui_ImplGlfw_KeyCallback(window, mk, 0, GLFW_PRESS, mods);
                    keys_to_release_.push_back(mk);
                }
                ImGui_ImplGlfw_KeyCallback(window, key, 0, GLFW_PRESS, mods);
                keys_to_release_.push_back(key);
                ++pc_;
                return;
            } else if (step.op == "type") {
                const std::string text = expand_env(step.args[0]);
                ImGui::GetIO().AddInputCharactersUTF8(text.c_str());
                ++pc_;
                return;
            } else if (step.op == "move" || step.op == "click") {
                float x = 0, y = 0;
                if (!resolve_target(step, 0, state, &x, &y)) {
                    widget_absent(step, state);  // (frames for it to be drawn, then a failure)
                    return;
                }
                wait_started_ = -1;
                // As a hand does it: the pointer arrives and rests on the target for a frame (ImGui
                // sees it hover the widget; a widget that moved meanwhile, e.g. after the fonts were
                // rebuilt, is followed), then for a click the button goes down (a frame) and up.
                const bool arrived = mouse_known_ && mouse_x_ == x && mouse_y_ == y;
                mouse_x_ = x;
                mouse_y_ = y;
                mouse_known_ = true;
                if (!arrived) return;
                if (step.op == "move") {
                    ++pc_;
                    continue;
                }
                button_down_ = true;
                release_button_next_ = true;
                ++pc_;
                return;
            } else if (step.op == "down" || step.op == "up") {
                button_down_ = step.op == "down";
                ++pc_;
                return;
            } else if (step.op == "drag") {
                float x = 0, y = 0;
                if (!resolve_target(step, 0, state, &x, &y)) {
                    widget_absent(step, state);  // (frames for it to be drawn, then a failure)
                    return;
                }
                wait_started_ = -1;
                const int n = std::max(1, std::atoi(step.args.back().c_str()));
                drag_from_x_ = mouse_x_;
                drag_from_y_ = mouse_y_;
                drag_to_x_ = x;
                drag_to_y_ = y;
                drag_frames_total_ = drag_frames_left_ = n;
                button_down_ = true;
                mouse_known_ = true;
                ++pc_;
                // First step of the drag on this frame.
                --drag_frames_left_;
                const float t = 1.0f - float(drag_frames_left_) / float(drag_frames_total_);
                mouse_x_ = drag_from_x_ + (drag_to_x_ - drag_from_x_) * t;
                mouse_y_ = drag_from_y_ + (drag_to_y_ - drag_from_y_) * t;
                return;
            } else if (step.op == "scroll") {
                wheel_ += std::stof(step.args[0]);
                ++pc_;
                return;
            } else if (step.op == "frames") {
                frames_left_ = std::max(1, std::atoi(step.args[0].c_str()));
                ++pc_;
                return;
            } else if (step.op == "screenshot") {
                screenshot_path_ = expand_env(step.args[0]);
                ++pc_;
                return;
            } else if (step.op == "window") {
                // The window manager (or Xvfb) applies it; the state's window_w/window_h follow once
                // GLFW has seen the new size, so a script waits for those.
                if (window)
                    glfwSetWindowSize(window, std::atoi(step.args[0].c_str()),
                                      std::atoi(step.args[1].c_str()));
                ++pc_;
                return;
            } else if (step.op == "ui_scale") {
                ui_scale_request_ = float(std::atof(step.args[0].c_str()));
                ++pc_;
                return;
            } else if (step.op == "lab") {
                // (an unknown name is the app's own status-line message, as with --lab)
                lab_request_ += (lab_request_.empty() ? "" : ",") + step.args[0];
                ++pc_;
                continue;
            } else if (step.op == "drop") {
                // Through the drop callback the app installed on its window, exactly as GLFW calls it
                // when a file manager drops files (the app opens them at the next frame).
                std::vector<std::string> paths;
                for (const std::string& a : step.args) paths.push_back(expand_env(a));
                std::vector<const char*> ptrs;
                for (const std::string& p : paths) ptrs.push_back(p.c_str());
                GLFWdropfun callback = window ? glfwSetDropCallback(window, nullptr) : nullptr;
                if (!callback) throw Error("the window has no drop callback");
                glfwSetDropCallback(window, callback);
                callback(window, int(ptrs.size()), ptrs.data());
                ++pc_;
                return;
            } else if (step.op == "clipboard_save") {
                // What another program pasting now would get (GLFW's X11 selection).
                const char* text = window ? glfwGetClipboardString(window) : nullptr;
                const std::string path = expand_env(step.args[0]);
                std::FILE* f = std::fopen(path.c_str(), "wb");
                if (!f) throw Error("cannot write " + path);
                if (text) std::fwrite(text, 1, std::strlen(text), f);
                std::fclose(f);
                ++pc_;
                continue;
            } else if (step.op == "quit") {
                done_ = true;
                return;
            }
        } catch (const std::exception& e) {
            fail(step, e.what(), state);
            return;
        }
        ++pc_;
    }
    done_ = true;  // ran off the end: same as quit
}

void ScriptPlayer::apply_mouse() {
    ImGuiIO& io = ImGui::GetIO();
    // The script owns the mouse: whatever the X pointer does, ImGui sees the script's mouse.
    io.MousePos = mouse_known_ ? ImVec2(mouse_x_, mouse_y_) : ImVec2(-FLT_MAX, -FLT_MAX);
    for (bool& d : io.MouseDown) d = false;
    io.MouseDown[0] = button_down_;
    io.MouseWheel += wheel_;
    wheel_ = 0;
}

}  // namespace attnviz::app
