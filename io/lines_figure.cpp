// The lines view's geometry and its figures (see lines_figure.hpp).
#include "io/lines_figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "io/font_raster.hpp"

namespace attnviz {

// (a named namespace, not an anonymous one: a unity build puts this file beside io/figure.cpp)
namespace lines_detail {

constexpr Rgb8 kInk{25, 25, 25};
constexpr Rgb8 kGrey{110, 110, 110};

// The figure's sizes at scale s (margins, fonts), and the plan it draws with.
struct Frame {
    float s, margin, title_px, label_px, legend_px, legend_h;
};

Frame frame_at(int scale) {
    const float s = float(std::max(1, scale));
    return {s, 18 * s, 19 * s, 13 * s, 12 * s, 22 * s};
}

LinesOptions scaled(const LinesInput& in, LinesOptions o, const Frame& f) {
    const FontRaster& font = FontRaster::get();
    float widest = 40 * f.s;
    for (const auto* v : {&in.queries, &in.keys})
        for (const std::string& t : *v) widest = std::max(widest, font.width(t, f.label_px) + 10 * f.s);
    o.label_width = std::min(widest, 260 * f.s);
    o.gap *= f.s;
    o.row_height *= f.s;
    o.min_width *= f.s;
    o.max_width *= f.s;
    o.top = f.margin + f.title_px * 1.6f + f.legend_h;
    return o;
}

std::string xml(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '"')
            out += "&quot;";
        else
            out += c;
    }
    return out;
}

std::string hex(Rgb8 c) {
    char b[8];
    std::snprintf(b, sizeof b, "#%02x%02x%02x", c.r, c.g, c.b);
    return b;
}

// Blends colour c with coverage a in [0, 1] over pixel (x, y).
void blend(Image& img, int x, int y, Rgb8 c, float a) {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height || a <= 0) return;
    std::uint8_t* p = &img.rgba[(std::size_t(y) * std::size_t(img.width) + std::size_t(x)) * 4];
    a = std::min(a, 1.0f);
    p[0] = std::uint8_t(std::lround(p[0] + (c.r - p[0]) * a));
    p[1] = std::uint8_t(std::lround(p[1] + (c.g - p[1]) * a));
    p[2] = std::uint8_t(std::lround(p[2] + (c.b - p[2]) * a));
}

// An anti-aliased segment of width w: each pixel near it gets coverage from its distance to the
// segment. Walks the major axis, so the work is the segment's length times its width.
void draw_segment(Image& img, const LineSegment& l) {
    const float dx = l.x1 - l.x0, dy = l.y1 - l.y0, len2 = dx * dx + dy * dy;
    const float r = l.width * 0.5f;
    auto cover = [&](int px, int py) {
        const float cx = float(px) + 0.5f, cy = float(py) + 0.5f;
        float t = len2 > 0 ? ((cx - l.x0) * dx + (cy - l.y0) * dy) / len2 : 0.0f;
        t = std::clamp(t, 0.0f, 1.0f);
        const float ex = l.x0 + t * dx - cx, ey = l.y0 + t * dy - cy;
        const float d = std::sqrt(ex * ex + ey * ey);
        // thin lines keep their ink: coverage scaled by the width below one pixel
        const float c = std::clamp(r + 0.5f - d, 0.0f, 1.0f) * std::min(1.0f, l.width);
        blend(img, px, py, l.colour, c * l.opacity);
    };
    const bool along_x = std::fabs(dx) >= std::fabs(dy);
    if (along_x) {
        const float slope = dx != 0 ? dy / dx : 0;
        const int reach = int(std::ceil(r * std::sqrt(1 + slope * slope))) + 2;
        for (int x = int(std::floor(std::min(l.x0, l.x1) - r)); x <= int(std::ceil(std::max(l.x0, l.x1) + r));
             ++x) {
            const float t = std::clamp((float(x) + 0.5f - l.x0) / (dx != 0 ? dx : 1), 0.0f, 1.0f);
            const int yc = int(std::floor(l.y0 + t * dy));
            for (int y = yc - reach; y <= yc + reach; ++y) cover(x, y);
        }
    } else {
        const float slope = dx / dy;
        const int reach = int(std::ceil(r * std::sqrt(1 + slope * slope))) + 2;
        for (int y = int(std::floor(std::min(l.y0, l.y1) - r)); y <= int(std::ceil(std::max(l.y0, l.y1) + r));
             ++y) {
            const float t = std::clamp((float(y) + 0.5f - l.y0) / dy, 0.0f, 1.0f);
            const int xc = int(std::floor(l.x0 + t * dx));
            for (int x = xc - reach; x <= xc + reach; ++x) cover(x, y);
        }
    }
}

// Everything a figure draws, handed either to the rasteriser or to the SVG writer.
struct Text {
    float x, y;  // baseline start
    std::string text;
    float px;
    Rgb8 colour;
    bool bold;
};
struct Swatch {
    float x, y, w, h;
    Rgb8 colour;
};
struct Drawing {
    int width = 0, height = 0;
    std::vector<LineSegment> lines;
    std::vector<Text> texts;
    std::vector<Swatch> swatches;
};

Drawing plan_figure(const LinesInput& in, const LinesOptions& lo, const FigureOptions& fo) {
    const Frame f = frame_at(fo.scale);
    const LinesOptions o = scaled(in, lo, f);
    LinesLayout L = plan_lines(in, o);
    const FontRaster& font = FontRaster::get();
    Drawing d;
    const float x_off = f.margin;
    d.width = int(std::ceil(L.width + 2 * f.margin));
    d.height = int(std::ceil(L.height + f.margin));
    for (LineSegment& s : L.lines) {
        s.x0 += x_off;
        s.x1 += x_off;
    }
    d.lines = std::move(L.lines);
    const float asc = font.ascent(f.label_px), desc = font.descent(f.label_px);
    const std::string title = in.title.empty() ? std::string("attention lines") : in.title;
    d.texts.push_back({f.margin, f.margin + font.ascent(f.title_px), title, f.title_px, kInk, true});
    // Legend: one swatch per head drawn (or the one head), on the line under the title.
    const int H = int(in.weights.size());
    float lx = f.margin;
    const float ly = f.margin + f.title_px * 1.6f;
    for (int h = 0; h < H; ++h) {
        if (o.head >= 0 && h != o.head) continue;
        const std::string label = "head " + std::to_string(h);
        d.swatches.push_back({lx, ly + 2 * f.s, 14 * f.s, f.legend_px * 0.9f, head_colour(h)});
        d.texts.push_back({lx + 18 * f.s, ly + font.ascent(f.legend_px), label, f.legend_px, kGrey, false});
        lx += 18 * f.s + font.width(label, f.legend_px) + 14 * f.s;
    }
    const bool hover = o.hover_side != LinesSide::None && o.hover_token >= 0;
    auto row_text = [&](const std::string& t, float right_edge, float y, bool left, bool lit) {
        const float w = font.width(t, f.label_px);
        const float x = left ? right_edge - w : right_edge;
        d.texts.push_back(
            {x, y + (asc - desc) * 0.5f, t, f.label_px, hover && !lit ? kGrey : kInk, lit && hover});
    };
    for (std::size_t i = 0; i < in.queries.size(); ++i)
        row_text(in.queries[i], x_off + L.left_x - 6 * f.s, L.query_y[i], true,
                 o.hover_side == LinesSide::Query && int(i) == o.hover_token);
    for (std::size_t j = 0; j < in.keys.size(); ++j)
        row_text(in.keys[j], x_off + L.right_x + 6 * f.s, L.key_y[j], false,
                 o.hover_side == LinesSide::Key && int(j) == o.hover_token);
    return d;
}

}  // namespace lines_detail

LinesInput lines_input(const Trace& trace, const std::string& title, const std::string& stage) {
    LinesInput in;
    for (int h = 0; h < trace.heads; ++h) {
        const Stage* st = trace.get(stage, h);
        if (!st) break;
        in.weights.push_back(st->matrix());
    }
    if (in.weights.empty()) throw Error("lines view: this trace has no attention weights");
    const Stage* st = trace.get(stage, 0);
    for (int i = 0; i < st->n_rows(); ++i) in.queries.push_back(st->rows.label(i));
    for (int j = 0; j < st->n_cols(); ++j) in.keys.push_back(st->cols.label(j));
    in.title = title;
    return in;
}

Rgb8 head_colour(int head) {
    static const Rgb8 kTableau[10] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                      {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                      {188, 189, 34},  {23, 190, 207}};
    return kTableau[((head % 10) + 10) % 10];
}

LinesLayout plan_lines(const LinesInput& in, const LinesOptions& o) {
    const int H = int(in.weights.size());
    if (o.head >= H || o.head < -1)
        throw Error("lines view: head " + std::to_string(o.head) + " is out of range; there are " +
                    std::to_string(H) + " heads");
    const int n = int(in.queries.size()), m = int(in.keys.size());
    for (const Mat& W : in.weights)
        if (W.rows() != n || W.cols() != m)
            throw Error("lines view: a head's weights are " + std::to_string(W.rows()) + "×" +
                        std::to_string(W.cols()) + ", the labels " + std::to_string(n) + "×" +
                        std::to_string(m));
    LinesLayout L;
    L.left_x = o.label_width;
    L.right_x = o.label_width + o.gap;
    L.width = 2 * o.label_width + o.gap;
    L.height = o.top + float(std::max(n, m)) * o.row_height;
    for (int i = 0; i < n; ++i) L.query_y.push_back(o.top + (float(i) + 0.5f) * o.row_height);
    for (int j = 0; j < m; ++j) L.key_y.push_back(o.top + (float(j) + 0.5f) * o.row_height);
    for (int h = 0; h < H; ++h) {
        if (o.head >= 0 && h != o.head) continue;
        const Mat& W = in.weights[std::size_t(h)];
        for (int i = 0; i < n; ++i) {
            if (o.hover_side == LinesSide::Query && o.hover_token >= 0 && i != o.hover_token) continue;
            for (int j = 0; j < m; ++j) {
                if (o.hover_side == LinesSide::Key && o.hover_token >= 0 && j != o.hover_token) continue;
                const float w = W(i, j);
                if (!std::isfinite(w) || w < o.min_weight) continue;
                LineSegment s;
                s.query = i;
                s.key = j;
                s.head = h;
                s.weight = std::min(w, 1.0f);
                s.x0 = L.left_x;
                s.y0 = L.query_y[std::size_t(i)];
                s.x1 = L.right_x;
                s.y1 = L.key_y[std::size_t(j)];
                s.width = o.min_width + (o.max_width - o.min_width) * s.weight;
                s.opacity = s.weight;
                s.colour = head_colour(h);
                L.lines.push_back(s);
            }
        }
    }
    // Weakest first, so the strongest lines are drawn on top whatever their head; the head in focus
    // last of all, so the head the stage view shows is never buried under the others.
    std::stable_sort(L.lines.begin(), L.lines.end(), [&](const LineSegment& a, const LineSegment& b) {
        const bool fa = a.head == o.front_head, fb = b.head == o.front_head;
        return fa != fb ? fb : a.weight < b.weight;
    });
    return L;
}

Image render_lines_figure(const LinesInput& in, const LinesOptions& lines, const FigureOptions& options) {
    using namespace lines_detail;
    const Drawing d = plan_figure(in, lines, options);
    Image img;
    img.width = std::max(1, d.width);
    img.height = std::max(1, d.height);
    img.rgba.assign(std::size_t(img.width) * std::size_t(img.height) * 4, 255);
    for (const Swatch& s : d.swatches)
        for (int y = int(s.y); y < int(s.y + s.h); ++y)
            for (int x = int(s.x); x < int(s.x + s.w); ++x) blend(img, x, y, s.colour, 1.0f);
    for (const LineSegment& l : d.lines) draw_segment(img, l);
    const FontRaster& font = FontRaster::get();
    for (const Text& t : d.texts)
        font.draw(img, t.x, t.y, t.text, t.px, t.colour, t.bold ? FontFace::Bold : FontFace::Regular);
    return img;
}

std::string render_lines_figure_svg(const LinesInput& in, const LinesOptions& lines,
                                    const FigureOptions& options) {
    using namespace lines_detail;
    const Drawing d = plan_figure(in, lines, options);
    std::string out =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
        std::to_string(d.width) + "\" height=\"" + std::to_string(d.height) + "\" viewBox=\"0 0 " +
        std::to_string(d.width) + " " + std::to_string(d.height) + "\">\n";
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    char buf[256];
    for (const Swatch& s : d.swatches) {
        std::snprintf(buf, sizeof buf,
                      "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                      double(s.x), double(s.y), double(s.w), double(s.h), hex(s.colour).c_str());
        out += buf;
    }
    out += "<g stroke-linecap=\"round\">\n";
    for (const LineSegment& l : d.lines) {
        std::snprintf(
            buf, sizeof buf,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.3f\" "
            "stroke-opacity=\"%.4f\"/>\n",
            double(l.x0), double(l.y0), double(l.x1), double(l.y1), hex(l.colour).c_str(), double(l.width),
            double(l.opacity));
        out += buf;
    }
    out += "</g>\n<g font-family=\"DejaVu Sans, Verdana, sans-serif\">\n";
    for (const Text& t : d.texts) {
        std::snprintf(buf, sizeof buf, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" fill=\"%s\"%s",
                      double(t.x), double(t.y), double(t.px), hex(t.colour).c_str(),
                      t.bold ? " font-weight=\"bold\"" : "");
        out += buf;
        out += " xml:space=\"preserve\">" + xml(t.text) + "</text>\n";
    }
    out += "</g>\n</svg>\n";
    return out;
}

}  // namespace attnviz
