// Shared pieces of the lab windows: axis maths, ImDrawList plots, heatmaps, page text, PNG export.
#include "app/panels/lab_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "app/fonts.hpp"
#include "app/panels/export_actions.hpp"
#include "app/panels/heatmap_widget.hpp"
#include "app/panels/panels.hpp"
#include "app/render/heatmap_texture.hpp"
#include "core/error.hpp"
#include "io/figure.hpp"
#include "io/files.hpp"

namespace attnviz::app {

// ---------------------------------------------------------------------------------------------
// Axis maths
// ---------------------------------------------------------------------------------------------

std::vector<double> linear_ticks(double lo, double hi, int max_ticks) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
    if (lo > hi) std::swap(lo, hi);
    if (lo == hi) return {lo};
    max_ticks = std::max(2, max_ticks);
    const double span = hi - lo;
    // Smallest step of the form {1, 2, 5}·10^k giving at most max_ticks ticks.
    const double raw = span / double(max_ticks - 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        step = m * mag;
        if (std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1 <= max_ticks) break;
    }
    std::vector<double> ticks;
    for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1.0) {
        double v = k * step;
        if (std::fabs(v) < step * 1e-9) v = 0.0;  // no "-0" or 1e-17 at zero
        ticks.push_back(v);
    }
    return ticks;
}

std::vector<double> log_ticks(double lo, double hi, int max_ticks) {
    if (!(lo > 0) || !(hi > 0) || !std::isfinite(lo) || !std::isfinite(hi)) return {};
    if (lo > hi) std::swap(lo, hi);
    max_ticks = std::max(2, max_ticks);
    const double e0 = std::ceil(std::log10(lo) - 1e-9), e1 = std::floor(std::log10(hi) + 1e-9);
    std::vector<double> ticks;
    if (e1 - e0 + 1 >= 2) {
        const int decades = int(e1 - e0) + 1;
        const int every = (decades + max_ticks - 1) / max_ticks;  // every k-th decade
        for (int e = int(e0); e <= int(e1); ++e)
            if ((e - int(e0)) % every == 0) ticks.push_back(std::pow(10.0, e));
        return ticks;
    }
    // Less than two decades: 1, 2, 5 × 10^k inside the range.
    for (int e = int(std::floor(std::log10(lo))); e <= int(std::ceil(std::log10(hi))); ++e)
        for (double m : {1.0, 2.0, 5.0}) {
            const double v = m * std::pow(10.0, e);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
        }
    if (int(ticks.size()) > max_ticks) {
        std::vector<double> thin;
        const std::size_t every = (ticks.size() + max_ticks - 1) / std::size_t(max_ticks);
        for (std::size_t i = 0; i < ticks.size(); i += every) thin.push_back(ticks[i]);
        ticks = thin;
    }
    return ticks;
}

std::string tick_label(double v) {
    char buf[32];
    const double a = std::fabs(v);
    if (v == 0.0)
        return "0";
    else if (a >= 1e5 || a < 1e-3)
        std::snprintf(buf, sizeof buf, "%.0e", v);
    else
        std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

double axis_fraction(double v, double lo, double hi, bool log) {
    if (log) {
        if (!(v > 0)) return -std::numeric_limits<double>::infinity();
        if (!(lo > 0) || !(hi > 0) || lo == hi) return 0.5;
        return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    }
    if (lo == hi) return 0.5;
    return (v - lo) / (hi - lo);
}

void auto_range(const std::vector<const std::vector<double>*>& values, bool log, double pad, double* lo,
                double* hi) {
    double a = std::numeric_limits<double>::infinity(), b = -a;
    for (const auto* vs : values)
        for (double v : *vs) {
            if (!std::isfinite(v) || (log && v <= 0)) continue;
            a = std::min(a, v);
            b = std::max(b, v);
        }
    if (!(a <= b)) {
        *lo = log ? 1.0 : 0.0;
        *hi = log ? 10.0 : 1.0;
        return;
    }
    if (log) {
        if (a == b) {
            a /= 2;
            b *= 2;
        }
        const double f = std::pow(b / a, pad);
        *lo = a / f;
        *hi = b * f;
    } else {
        if (a == b) {
            a -= std::max(0.5, std::fabs(a) * 0.1);
            b += std::max(0.5, std::fabs(b) * 0.1);
        }
        const double p = (b - a) * pad;
        *lo = a - p;
        *hi = b + p;
    }
}

// ---------------------------------------------------------------------------------------------
// Plots
// ---------------------------------------------------------------------------------------------

ImU32 palette(int i) {
    static const ImU32 colors[] = {
        IM_COL32(86, 180, 233, 255),  IM_COL32(230, 159, 0, 255),   IM_COL32(0, 200, 140, 255),
        IM_COL32(240, 90, 90, 255),   IM_COL32(204, 121, 167, 255), IM_COL32(240, 228, 66, 255),
        IM_COL32(170, 170, 255, 255), IM_COL32(255, 160, 122, 255), IM_COL32(150, 220, 90, 255),
        IM_COL32(200, 200, 200, 255),
    };
    const int n = int(sizeof colors / sizeof colors[0]);
    return colors[((i % n) + n) % n];
}

namespace {

// Dashed line from a to b.
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float thickness = 1.0f) {
    const float dx = b.x - a.x, dy = b.y - a.y;
    const float len = std::sqrt(dx * dx + dy * dy);
    if (len < 1) return;
    const float dash = 6, gap = 4;
    for (float t = 0; t < len; t += dash + gap) {
        const float t1 = std::min(len, t + dash);
        dl->AddLine(ImVec2(a.x + dx * t / len, a.y + dy * t / len),
                    ImVec2(a.x + dx * t1 / len, a.y + dy * t1 / len), col, thickness);
    }
}

struct PlotFrame {
    ImVec2 p0, p1;  // the data rectangle (screen)
    double x_lo, x_hi, y_lo, y_hi;
    bool log_x, log_y;
    float sx(double x) const { return p0.x + float(axis_fraction(x, x_lo, x_hi, log_x)) * (p1.x - p0.x); }
    float sy(double y) const { return p1.y - float(axis_fraction(y, y_lo, y_hi, log_y)) * (p1.y - p0.y); }
};

// Axes, ticks, grid and titles for a frame; returns the data rectangle inside `origin`/`size`.
PlotFrame draw_axes(ImDrawList* dl, ImVec2 origin, ImVec2 size, const std::string& title,
                    const std::string& x_label, const std::string& y_label, double x_lo, double x_hi,
                    bool log_x, double y_lo, double y_hi, bool log_y, bool x_ticks = true) {
    const float line = ImGui::GetTextLineHeight();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const ImU32 grid = IM_COL32(255, 255, 255, 28);
    const ImU32 axis = IM_COL32(200, 200, 200, 160);

    // A title wider than the plot wraps (at word boundaries) instead of running past its edge.
    const float title_w = std::max(1.0f, size.x - 10);
    const ImVec2 title_size =
        title.empty() ? ImVec2(0, 0) : ImGui::CalcTextSize(title.c_str(), nullptr, false, title_w);
    const float top = title.empty() ? line * 0.5f : title_size.y + 6;
    const float bottom = (x_ticks ? line + 4 : 0) + (x_label.empty() ? 0 : line + 4) + 4;
    // As many y ticks as fit without their labels touching (a short plot gets 2 or 3).
    const int max_y = std::clamp(int((size.y - top - bottom) / (line * 1.5f)), 2, 7);
    const std::vector<double> yt = log_y ? log_ticks(y_lo, y_hi, max_y) : linear_ticks(y_lo, y_hi, max_y);
    float y_label_w = 0;
    for (double v : yt) y_label_w = std::max(y_label_w, ImGui::CalcTextSize(tick_label(v).c_str()).x);
    const float left = (y_label.empty() ? 0 : line + 4) + y_label_w + 8;
    PlotFrame f;
    f.p0 = ImVec2(origin.x + left, origin.y + top);
    f.p1 = ImVec2(origin.x + size.x - 10, origin.y + size.y - bottom);
    f.x_lo = x_lo;
    f.x_hi = x_hi;
    f.y_lo = y_lo;
    f.y_hi = y_hi;
    f.log_x = log_x;
    f.log_y = log_y;

    dl->AddRectFilled(f.p0, f.p1, IM_COL32(255, 255, 255, 8));
    if (!title.empty()) {
        const float tw = title_size.x;
        // centred over the plot area when it fits there, else from the left edge of the whole box
        const float x = tw <= f.p1.x - f.p0.x ? f.p0.x + (f.p1.x - f.p0.x - tw) * 0.5f
                                              : std::max(origin.x, origin.x + size.x - 10 - tw);
        dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(x, origin.y), text, title.c_str(), nullptr,
                    title_w);
        layout_record("plot." + title.substr(0, 24) + ".title", x, origin.y, tw, title_size.y, origin.x,
                      origin.x + size.x);
    }
    for (double v : yt) {
        const float y = f.sy(v);
        if (y < f.p0.y - 1 || y > f.p1.y + 1) continue;
        dl->AddLine(ImVec2(f.p0.x, y), ImVec2(f.p1.x, y), grid);
        const std::string s = tick_label(v);
        const float w = ImGui::CalcTextSize(s.c_str()).x;
        dl->AddText(ImVec2(f.p0.x - 6 - w, y - line * 0.5f), dim, s.c_str());
    }
    if (x_ticks) {
        const float plot_w = f.p1.x - f.p0.x;
        const int max_x = std::max(2, int(plot_w / (ImGui::CalcTextSize("0.0000").x + 12)));
        const std::vector<double> xt = log_x ? log_ticks(x_lo, x_hi, max_x) : linear_ticks(x_lo, x_hi, max_x);
        for (double v : xt) {
            const float x = f.sx(v);
            if (x < f.p0.x - 1 || x > f.p1.x + 1) continue;
            dl->AddLine(ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), grid);
            const std::string s = tick_label(v);
            const float w = ImGui::CalcTextSize(s.c_str()).x;
            dl->AddText(ImVec2(x - w * 0.5f, f.p1.y + 3), dim, s.c_str());
        }
    }
    dl->AddLine(ImVec2(f.p0.x, f.p1.y), ImVec2(f.p1.x, f.p1.y), axis);
    dl->AddLine(ImVec2(f.p0.x, f.p0.y), ImVec2(f.p0.x, f.p1.y), axis);
    if (!x_label.empty()) {
        const std::string s = x_label + (log_x ? "  (log scale)" : "");
        const float w = ImGui::CalcTextSize(s.c_str()).x;
        dl->AddText(
            ImVec2(f.p0.x + std::max(0.0f, (f.p1.x - f.p0.x - w) * 0.5f), origin.y + size.y - line - 4), text,
            s.c_str());
    }
    if (!y_label.empty()) {
        const std::string s = y_label + (log_y ? "  (log)" : "");
        const float w = ImGui::CalcTextSize(s.c_str()).x;
        add_text_vertical(dl, ImVec2(origin.x, f.p0.y + (f.p1.y - f.p0.y + w) * 0.5f), text, s);
    }
    return f;
}

ImVec2 legend_size(const std::vector<std::pair<std::string, ImU32>>& entries) {
    const float line = ImGui::GetTextLineHeight();
    float w = 0;
    for (const auto& e : entries) w = std::max(w, ImGui::CalcTextSize(e.first.c_str()).x);
    return ImVec2(w + 30, float(entries.size()) * (line + 2) + 6);
}

/// The corner whose legend box would hide the fewest drawn points (matplotlib's "best"), starting
/// from the preferred one, which wins ties: a legend never sits on the curves when a free corner exists.
void best_legend_corner(const PlotFrame& f, ImVec2 box, const std::vector<PlotSeries>& series, bool* right,
                        bool* bottom) {
    const bool pref_r = *right, pref_b = *bottom;
    long best = -1;
    for (int k = 0; k < 4; ++k) {
        const bool r = (k & 1) ? !pref_r : pref_r, b = (k & 2) ? !pref_b : pref_b;
        const ImVec2 a(r ? f.p1.x - box.x - 6 : f.p0.x + 6, b ? f.p1.y - box.y - 6 : f.p0.y + 6);
        long covered = 0;
        for (const auto& s : series) {
            const std::size_t n = std::min(s.x.size(), s.y.size());
            for (std::size_t i = 0; i < n; ++i) {
                const float x = f.sx(s.x[i]), y = f.sy(s.y[i]);
                covered += x >= a.x && x <= a.x + box.x && y >= a.y && y <= a.y + box.y;
                // (the segment to the next point too, sampled at its middle)
                if (i + 1 < n) {
                    const float mx = 0.5f * (x + f.sx(s.x[i + 1])), my = 0.5f * (y + f.sy(s.y[i + 1]));
                    covered += mx >= a.x && mx <= a.x + box.x && my >= a.y && my <= a.y + box.y;
                }
            }
        }
        if (best < 0 || covered < best) {
            best = covered;
            *right = r;
            *bottom = b;
        }
    }
}

void draw_legend(ImDrawList* dl, const PlotFrame& f,
                 const std::vector<std::pair<std::string, ImU32>>& entries, bool right, bool bottom = false) {
    if (entries.empty()) return;
    const float line = ImGui::GetTextLineHeight();
    const ImVec2 size = legend_size(entries);
    const float w = size.x, h = size.y;
    const ImVec2 a(right ? f.p1.x - w - 6 : f.p0.x + 6, bottom ? f.p1.y - h - 6 : f.p0.y + 6);
    dl->AddRectFilled(a, ImVec2(a.x + w, a.y + h), IM_COL32(20, 20, 24, 215), 3);
    dl->AddRect(a, ImVec2(a.x + w, a.y + h), IM_COL32(255, 255, 255, 50), 3);
    float y = a.y + 3;
    for (const auto& e : entries) {
        dl->AddRectFilled(ImVec2(a.x + 6, y + line * 0.5f - 2), ImVec2(a.x + 20, y + line * 0.5f + 2),
                          e.second);
        dl->AddText(ImVec2(a.x + 24, y), ImGui::GetColorU32(ImGuiCol_Text), e.first.c_str());
        y += line + 2;
    }
}

}  // namespace

void draw_line_plot(const char* id, const PlotSpec& spec, const std::vector<PlotSeries>& series,
                    ImVec2 size) {
    ImGui::PushID(id);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
    if (size.y <= 0) size.y = 240;
    ImDrawList* dl = ImGui::GetWindowDrawList();

    std::vector<const std::vector<double>*> xs, ys;
    for (const auto& s : series) {
        xs.push_back(&s.x);
        ys.push_back(&s.y);
    }
    std::vector<double> ref_x, ref_y;
    for (const auto& r : spec.ref_lines) (r.horizontal ? ref_y : ref_x).push_back(r.value);
    xs.push_back(&ref_x);
    ys.push_back(&ref_y);
    double x_lo, x_hi, y_lo, y_hi;
    auto_range(xs, spec.log_x, spec.log_x ? 0.02 : 0.0, &x_lo, &x_hi);
    auto_range(ys, spec.log_y, spec.log_y ? 0.06 : 0.06, &y_lo, &y_hi);
    if (std::isfinite(spec.x_min)) x_lo = spec.x_min;
    if (std::isfinite(spec.x_max)) x_hi = spec.x_max;
    if (std::isfinite(spec.y_min)) y_lo = spec.y_min;
    if (std::isfinite(spec.y_max)) y_hi = spec.y_max;

    const PlotFrame f = draw_axes(dl, origin, size, spec.title, spec.x_label, spec.y_label, x_lo, x_hi,
                                  spec.log_x, y_lo, y_hi, spec.log_y);
    dl->PushClipRect(ImVec2(f.p0.x - 4, f.p0.y - 4), ImVec2(f.p1.x + 4, f.p1.y + 4), true);
    // Vertical lines' labels sit along the bottom, right of their line (left of it near the right
    // edge); a label that would overlap one already placed goes a line higher.
    std::vector<std::vector<std::pair<float, float>>> label_rows;  // per row: the x extents taken
    std::vector<std::size_t> order(spec.ref_lines.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return spec.ref_lines[a].value < spec.ref_lines[b].value;
    });
    const float line_h = ImGui::GetTextLineHeight();
    struct PlacedLabel {
        ImVec2 at;
        float w;
        const RefLine* line;
    };
    std::vector<PlacedLabel> labels;  // drawn over the curves, so no curve hides one
    for (std::size_t i : order) {
        const RefLine& r = spec.ref_lines[i];
        if (r.horizontal) {
            const float y = f.sy(r.value);
            dashed_line(dl, ImVec2(f.p0.x, y), ImVec2(f.p1.x, y), r.color, 1.5f);
            if (!r.label.empty()) {
                const ImVec2 ts = ImGui::CalcTextSize(r.label.c_str());
                dl->AddText(ImVec2(f.p0.x + 6, y - ts.y - 1), r.color, r.label.c_str());
            }
            continue;
        }
        const float x = f.sx(r.value);
        if (!std::isfinite(x) || x < f.p0.x - 1 || x > f.p1.x + 1) continue;
        dashed_line(dl, ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), r.color, 1.5f);
        if (r.label.empty()) continue;
        const float tw = ImGui::CalcTextSize(r.label.c_str()).x;
        const float lx = x + 3 + tw <= f.p1.x ? x + 3 : std::max(f.p0.x, x - 3 - tw);
        std::size_t row = 0;
        for (; row < label_rows.size(); ++row) {
            bool free = true;
            for (const auto& [a, b] : label_rows[row])
                if (lx < b + 4 && lx + tw > a - 4) free = false;
            if (free) break;
        }
        if (row == label_rows.size()) label_rows.emplace_back();
        label_rows[row].emplace_back(lx, lx + tw);
        const float ly = f.p1.y - float(row + 1) * (line_h + 1) - 1;
        if (ly < f.p0.y) continue;  // no room left in the plot: the line alone
        labels.push_back({ImVec2(lx, ly), tw, &r});
    }
    for (const auto& s : series) {
        const std::size_t n = std::min(s.x.size(), s.y.size());
        std::vector<ImVec2> pts;
        pts.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            const float x = f.sx(s.x[i]), y = f.sy(s.y[i]);
            if (!std::isfinite(x) || !std::isfinite(y)) {
                // A gap (NaN, or ≤ 0 on a log axis): draw what we have and restart.
                if (s.line && pts.size() >= 2)
                    dl->AddPolyline(pts.data(), int(pts.size()), s.color, 0, s.thickness);
                pts.clear();
                continue;
            }
            pts.emplace_back(x, y);
            if (s.markers) dl->AddCircleFilled(ImVec2(x, y), s.marker_radius, s.color, 12);
        }
        if (s.line && pts.size() >= 2) dl->AddPolyline(pts.data(), int(pts.size()), s.color, 0, s.thickness);
    }
    for (const PlacedLabel& l : labels) {
        dl->AddRectFilled(ImVec2(l.at.x - 2, l.at.y), ImVec2(l.at.x + l.w + 2, l.at.y + line_h),
                          IM_COL32(24, 24, 28, 200), 2.0f);
        dl->AddText(l.at, l.line->color, l.line->label.c_str());
        layout_record("plot." + spec.title.substr(0, 24) + ".mark." + l.line->label, l.at.x, l.at.y, l.w,
                      line_h, origin.x, origin.x + size.x);
    }
    dl->PopClipRect();

    if (spec.legend) {
        std::vector<std::pair<std::string, ImU32>> entries;
        for (const auto& s : series)
            if (!s.label.empty()) entries.emplace_back(s.label, s.color);
        bool right = spec.legend_right, bottom = spec.legend_bottom;
        if (!entries.empty()) best_legend_corner(f, legend_size(entries), series, &right, &bottom);
        draw_legend(dl, f, entries, right, bottom);
    }

    ImGui::SetCursorScreenPos(origin);
    ImGui::InvisibleButton("##plot", size);
    if (ImGui::IsItemHovered()) {
        // Nearest point (in pixels) of any series.
        const ImVec2 m = ImGui::GetIO().MousePos;
        float best = 20.0f * 20.0f;
        const PlotSeries* bs = nullptr;
        std::size_t bi = 0;
        for (const auto& s : series) {
            for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
                const float dx = f.sx(s.x[i]) - m.x, dy = f.sy(s.y[i]) - m.y;
                if (!std::isfinite(dx) || !std::isfinite(dy)) continue;
                if (dx * dx + dy * dy < best) {
                    best = dx * dx + dy * dy;
                    bs = &s;
                    bi = i;
                }
            }
        }
        if (bs) {
            dl->AddCircle(ImVec2(f.sx(bs->x[bi]), f.sy(bs->y[bi])), 6, IM_COL32(255, 255, 255, 220), 16,
                          1.5f);
            ImGui::SetTooltip("%s%s(%s, %.4g)", bs->label.c_str(), bs->label.empty() ? "" : ": ",
                              tick_label(bs->x[bi]).c_str(), bs->y[bi]);
        }
    }
    ImGui::PopID();
}

void draw_bar_groups(const char* id, const BarGroupsSpec& spec, ImVec2 size) {
    ImGui::PushID(id);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
    if (size.y <= 0) size.y = 240;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const int groups = int(spec.group_labels.size());
    const int nser = int(spec.values.size());

    double y_hi = 0;
    for (const auto& s : spec.values)
        for (double v : s)
            if (std::isfinite(v)) y_hi = std::max(y_hi, v);
    if (std::isfinite(spec.y_max)) y_hi = spec.y_max;
    if (y_hi <= 0) y_hi = 1;

    // x runs over group slots [0, groups); the x tick labels are the group names, drawn below.
    const float line = ImGui::GetTextLineHeight();
    PlotFrame f = draw_axes(dl, origin, ImVec2(size.x, size.y), spec.title, spec.x_label, spec.y_label, 0,
                            std::max(1, groups), false, 0, y_hi * 1.05, false, false);
    // Room for group labels: draw_axes reserved none (x_ticks = false), so lift the frame's bottom.
    f.p1.y -= line + 4;
    const float gw = (f.p1.x - f.p0.x) / std::max(1, groups);
    const float bar_w = std::max(1.0f, (gw * 0.8f) / std::max(1, nser));
    ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    for (int g = 0; g < groups; ++g) {
        const float gx = f.p0.x + g * gw + gw * 0.1f;
        for (int s = 0; s < nser; ++s) {
            if (g >= int(spec.values[s].size())) continue;
            const double v = spec.values[s][g];
            const float y = f.sy(std::max(0.0, v));
            dl->AddRectFilled(ImVec2(gx + s * bar_w, y), ImVec2(gx + (s + 1) * bar_w - 1, f.sy(0)),
                              palette(s));
        }
        const std::string& lab = spec.group_labels[g];
        const float tw = ImGui::CalcTextSize(lab.c_str()).x;
        dl->AddText(ImVec2(f.p0.x + g * gw + (gw - tw) * 0.5f, f.p1.y + 3), text, lab.c_str());
    }
    dl->AddLine(ImVec2(f.p0.x, f.p1.y), ImVec2(f.p1.x, f.p1.y), IM_COL32(200, 200, 200, 160));
    std::vector<std::pair<std::string, ImU32>> entries;
    for (int s = 0; s < int(spec.series_labels.size()); ++s)
        entries.emplace_back(spec.series_labels[s], palette(s));
    draw_legend(dl, f, entries, true);

    ImGui::SetCursorScreenPos(origin);
    ImGui::InvisibleButton("##bars", size);
    if (ImGui::IsItemHovered() && groups > 0) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int g = int((m.x - f.p0.x) / gw);
        if (g >= 0 && g < groups) {
            std::string tip = spec.group_labels[g];
            for (int s = 0; s < nser; ++s) {
                if (g >= int(spec.values[s].size())) continue;
                char buf[96];
                std::snprintf(buf, sizeof buf, "\n%s: %.4f",
                              s < int(spec.series_labels.size()) ? spec.series_labels[s].c_str() : "",
                              spec.values[s][g]);
                tip += buf;
            }
            ImGui::SetTooltip("%s", tip.c_str());
        }
    }
    ImGui::PopID();
}

// ---------------------------------------------------------------------------------------------
// Heatmaps and page furniture
// ---------------------------------------------------------------------------------------------

Axis index_axis(const std::string& name, int size) {
    Axis a;
    a.kind = Axis::Kind::Dimension;
    a.name = name;
    a.size = size;
    return a;
}

Axis label_axis(const std::string& name, const std::vector<std::string>& labels) {
    Axis a;
    a.kind = Axis::Kind::KeyTokens;
    a.name = name;
    a.size = int(labels.size());
    a.tokens = std::make_shared<const std::vector<std::string>>(labels);
    return a;
}

HeatmapResult lab_heatmap(const char* id, HeatmapViewState& view, const std::string& key, const Mat& M,
                          ValueKind kind, const Axis& rows, const Axis& cols, const char* title, float width,
                          float height, const ColorRange* range, float min_fill) {
    const CachedMatrix& cm =
        view_cache().get("lab/" + key, kind, [&] { return std::make_shared<const Mat>(M); });
    HeatmapInput in;
    in.matrix = &cm;
    in.row_axis = &rows;
    in.col_axis = &cols;
    in.range = range;
    HeatmapOptions opt;
    opt.width = width;
    opt.height = height;
    opt.title = title;
    opt.min_fill = min_fill;
    // A group around the widget: the widget moves the cursor around inside its region, which makes
    // ImGui forget the height of a taller heatmap placed before it with SameLine() (the findings then
    // overlap its bottom rows). The group reports its full bounding box as one item.
    ImGui::BeginGroup();
    HeatmapResult r = heatmap_widget(id, view, in, opt);
    ImGui::EndGroup();
    if (r.hovered && r.row >= 0 && r.col >= 0 && r.row < M.rows() && r.col < M.cols()) {
        ImGui::SetTooltip("%s %s, %s %s\nvalue %s", rows.name.c_str(), rows.label(r.row).c_str(),
                          cols.name.c_str(), cols.label(r.col).c_str(),
                          format_value(M(r.row, r.col)).c_str());
    }
    return r;
}

std::string lab_display_text(const std::string& text) {
    // ImGui 1.86 draws a combining mark as its own glyph without positioning it over the base
    // letter, so "f̂" (f + U+0302) shows its hat off to the left of a narrow f. The estimate
    // f̂(x) of the kernel-regression lab is the prediction ŷ of its text, and ŷ exists precomposed.
    static const std::pair<const char*, const char*> kSwaps[] = {{"f\u0302", "\u0177"}};
    std::string out = text;
    for (const auto& [from, to] : kSwaps) {
        const std::string f(from), t(to);
        for (std::size_t at = out.find(f); at != std::string::npos; at = out.find(f, at + t.size()))
            out.replace(at, f.size(), t);
    }
    return out;
}

void lab_formula(const std::string& formula) {
    ImGui::PushFont(app_font(FontRole::Large));
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.85f, 0.45f, 1.0f));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(lab_display_text(formula).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    ImGui::PopFont();
}

void lab_explanation(const std::string& text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.82f, 0.84f, 0.88f, 1.0f));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(lab_display_text(text).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
}

float lab_findings_height(const std::vector<std::string>& findings, float width) {
    if (findings.empty()) return 0.0f;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float bullet_w = ImGui::GetTreeNodeToLabelSpacing() + style.ItemSpacing.x;
    float h = style.ItemSpacing.y * 2 + ImGui::GetTextLineHeightWithSpacing();  // Spacing + heading
    for (const auto& f : findings)
        h += ImGui::CalcTextSize(f.c_str(), nullptr, false, std::max(1.0f, width - bullet_w)).y +
             style.ItemSpacing.y;
    return h;
}

ColorRange weights_range(const Mat& A) {
    float hi = 0.0f;
    for (Eigen::Index i = 0; i < A.size(); ++i)
        if (std::isfinite(A.data()[i])) hi = std::max(hi, A.data()[i]);
    return ColorRange{ColorMap::Sequential, 0.0f, std::max(hi, 1e-6f)};
}

void lab_findings(const std::vector<std::string>& findings) {
    if (findings.empty()) return;
    ImGui::Spacing();
    lab_heading("What the numbers say");
    ImGui::PushTextWrapPos(0.0f);
    for (const auto& f : findings) {
        ImGui::Bullet();
        ImGui::SameLine();
        ImGui::TextUnformatted(f.c_str());
    }
    ImGui::PopTextWrapPos();
}

void lab_error(const std::string& message) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(message.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
}

void lab_heading(const std::string& text) {
    ImGui::PushFont(app_font(FontRole::Bold));
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopFont();
}

int lab_tab_flags(LabContext& ctx, int i) {
    if (ctx.requested_tab == i) {
        ctx.requested_tab = -1;
        return ImGuiTabItemFlags_SetSelected;
    }
    return 0;
}

void lab_mark_busy(AppState& state) {
    // The shell resets `updating` from its compute worker at the start of every frame, so this only
    // keeps the event loop polling (the result appears without waiting for input) and makes
    // `--screenshot` wait for it.
    state.updating = true;
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

std::vector<unsigned char> crop_rgba(const std::vector<unsigned char>& rgba, int width, int height, int x0,
                                     int y0, int x1, int y1, int* out_w, int* out_h) {
    x0 = std::clamp(x0, 0, width);
    x1 = std::clamp(x1, 0, width);
    y0 = std::clamp(y0, 0, height);
    y1 = std::clamp(y1, 0, height);
    const int w = std::max(0, x1 - x0), h = std::max(0, y1 - y0);
    std::vector<unsigned char> out(std::size_t(w) * h * 4);
    if (rgba.size() < std::size_t(width) * height * 4) {
        *out_w = *out_h = 0;
        return {};
    }
    for (int y = 0; y < h; ++y)
        std::copy_n(rgba.begin() + (std::size_t(y0 + y) * width + x0) * 4, std::size_t(w) * 4,
                    out.begin() + std::size_t(y) * w * 4);
    *out_w = w;
    *out_h = h;
    return out;
}

std::string lab_export_file_name(const std::string& slug_name, const std::string& timestamp) {
    return "lab_" + slug(slug_name) + "_" + timestamp + ".png";
}

namespace {

struct PendingCapture {
    AppState* state = nullptr;
    std::string slug;
    ImVec2 pos, size;
};

// Runs inside ImGui_ImplOpenGL3_RenderDrawData, after every window of the frame has been drawn
// (the foreground draw list comes last): the default framebuffer holds the finished frame.
void capture_callback(const ImDrawList*, const ImDrawCmd* cmd) {
    std::unique_ptr<PendingCapture> cap(static_cast<PendingCapture*>(cmd->UserCallbackData));
    if (!cap || !cap->state) return;
    AppState& state = *cap->state;
    const ImDrawData* dd = ImGui::GetDrawData();
    const ImVec2 scale = dd ? dd->FramebufferScale : ImVec2(1, 1);
    const ImVec2 disp = dd ? dd->DisplaySize : ImGui::GetIO().DisplaySize;
    const ImVec2 disp_pos = dd ? dd->DisplayPos : ImVec2(0, 0);
    const int fb_w = int(disp.x * scale.x), fb_h = int(disp.y * scale.y);
    try {
        std::vector<unsigned char> rgba;
        render::read_framebuffer(fb_w, fb_h, &rgba);
        Image img;
        img.rgba = crop_rgba(rgba, fb_w, fb_h, int((cap->pos.x - disp_pos.x) * scale.x),
                             int((cap->pos.y - disp_pos.y) * scale.y),
                             int((cap->pos.x + cap->size.x - disp_pos.x) * scale.x),
                             int((cap->pos.y + cap->size.y - disp_pos.y) * scale.y), &img.width, &img.height);
        if (img.width <= 0 || img.height <= 0)
            throw Error("the lab window is outside the screen; move it into view");
        const std::string dir = normalize_export_dir(state.export_dir);
        if (!dir.empty()) make_dirs(dir);
        const std::string path =
            (dir.empty() ? "" : dir + "/") + lab_export_file_name(cap->slug, timestamp_for_filename());
        write_png(path, img);
        state.last_export_path = path;
        state.set_status("Exported the lab window to " + path, false);
    } catch (const std::exception& e) {
        state.set_status(std::string("Lab export failed: ") + e.what(), true);
    }
}

}  // namespace

void lab_export_button(AppState& state, const char* slug_name) {
    if (ImGui::Button("Export PNG")) {
        auto* cap = new PendingCapture{&state, slug_name, ImGui::GetWindowPos(), ImGui::GetWindowSize()};
        ImGui::GetForegroundDrawList()->AddCallback(capture_callback, cap);
        ImGui::GetForegroundDrawList()->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Save this lab window as a PNG in the export folder (%s)",
                          state.export_dir.c_str());
}

}  // namespace attnviz::app
