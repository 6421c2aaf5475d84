#version 330 core
// Colours one matrix (a GL_R32F texture, -inf kept for masked cells) as a heatmap.
//
// The colour maps below are the SAME numbers as io/colormap.cpp (tests/io/colormap_test.cpp parses
// this file and compares), so the GUI and the exported PNG figures show identical colours.
//
// Target layout: pixel row 0 (gl_FragCoord.y < 1) is the TOP of the picture (matrix row y0), so the
// colour texture stores the top row first and ImGui::Image shows it upright with default UVs.

uniform sampler2D u_data;    // cols x rows, one float per cell, sampled with texelFetch (nearest)
uniform vec2 u_size;         // (cols, rows) of the matrix
uniform vec4 u_view;         // window in cell units: (x0, y0, x1, y1), columns [x0,x1), rows [y0,y1)
uniform vec2 u_target;       // (width, height) of the target in pixels
uniform float u_lo;          // value shown as the first stop
uniform float u_hi;          // value shown as the last stop
uniform int u_map;           // 0 = sequential, 1 = diverging
uniform ivec2 u_highlight;   // (row, col) to outline; -1 = none
uniform int u_dim_others;    // 1: dim cells outside the highlighted row/column
uniform int u_level;         // u_data is reduction level k: one texel per 2^k x 2^k cells (max or mean)
uniform int u_log;           // 1: t = log2(v / lo) / log2(hi / lo) (values <= 0 at the bottom)

out vec4 frag_color;

// Sequential (viridis-like), sRGB 0..255, t = 0, 1/8, ..., 1.
const vec3 SEQUENTIAL_STOPS[9] = vec3[9](
    vec3(68.0, 1.0, 84.0),
    vec3(71.0, 45.0, 123.0),
    vec3(59.0, 82.0, 139.0),
    vec3(44.0, 114.0, 142.0),
    vec3(33.0, 145.0, 140.0),
    vec3(40.0, 174.0, 128.0),
    vec3(94.0, 201.0, 98.0),
    vec3(173.0, 220.0, 48.0),
    vec3(253.0, 231.0, 37.0)
);

// Diverging blue - white - red, symmetric about the middle stop (value 0).
const vec3 DIVERGING_STOPS[9] = vec3[9](
    vec3(5.0, 48.0, 97.0),
    vec3(33.0, 102.0, 172.0),
    vec3(67.0, 147.0, 195.0),
    vec3(146.0, 197.0, 222.0),
    vec3(247.0, 247.0, 247.0),
    vec3(244.0, 165.0, 130.0),
    vec3(214.0, 96.0, 77.0),
    vec3(178.0, 24.0, 43.0),
    vec3(103.0, 0.0, 31.0)
);

// Masked-cell hatch, the same greys as io/colormap.hpp kHatchDark / kHatchLight.
const vec3 HATCH_DARK = vec3(150.0, 150.0, 150.0);
const vec3 HATCH_LIGHT = vec3(212.0, 212.0, 212.0);

vec3 colormap(float t) {
    t = clamp(t, 0.0, 1.0);
    float x = t * 8.0;
    int k = min(int(floor(x)), 7);
    float f = x - float(k);
    vec3 a = (u_map == 0) ? SEQUENTIAL_STOPS[k] : DIVERGING_STOPS[k];
    vec3 b = (u_map == 0) ? SEQUENTIAL_STOPS[k + 1] : DIVERGING_STOPS[k + 1];
    return (a + (b - a) * f) / 255.0;
}

// Same formula as masked_rgb(x, y) in io/colormap.cpp: stripes constant along x + y, 8 px period.
vec3 hatch(ivec2 p) {
    int s = (p.x + p.y) % 8;
    return ((s < 4) ? HATCH_DARK : HATCH_LIGHT) / 255.0;
}

void main() {
    ivec2 pix = ivec2(floor(gl_FragCoord.xy));
    vec2 span = u_view.zw - u_view.xy;
    // Cell coordinate of this pixel's centre.
    vec2 c = u_view.xy + gl_FragCoord.xy / u_target * span;
    if (c.x < 0.0 || c.y < 0.0 || c.x >= u_size.x || c.y >= u_size.y) {
        frag_color = vec4(0.0);  // outside the matrix: transparent, the panel shows through
        return;
    }
    ivec2 cell = ivec2(floor(c));  // (col, row)
    float v = texelFetch(u_data, cell >> u_level, 0).r;

    vec3 rgb;
    bool masked = isinf(v) || isnan(v);
    if (masked) {
        rgb = hatch(pix);
    } else {
        float t;
        if (u_log == 1) {
            // Same expression as scale_t() in io/colormap.cpp.
            t = (v > 0.0 && u_hi > u_lo && u_lo > 0.0) ? log2(v / u_lo) / log2(u_hi / u_lo) : 0.0;
        } else {
            float range = u_hi - u_lo;
            t = range > 0.0 ? (v - u_lo) / range : 0.5;
        }
        rgb = colormap(t);
    }

    // Pixels per cell; grid lines only when cells are big enough to read them as cells.
    vec2 cell_px = u_target / span;
    vec2 inside = fract(c) * cell_px;  // distance (px) from the cell's top-left edge
    if (cell_px.x >= 12.0 && cell_px.y >= 12.0 && (inside.x < 1.0 || inside.y < 1.0)) {
        rgb = mix(rgb, vec3(0.5), 0.35);
    }

    bool hl_row = u_highlight.x >= 0 && cell.y == u_highlight.x;
    bool hl_col = u_highlight.y >= 0 && cell.x == u_highlight.y;
    if (u_dim_others == 1 && (u_highlight.x >= 0 || u_highlight.y >= 0) && !hl_row && !hl_col) {
        rgb = mix(rgb, vec3(0.35), 0.55);
    }
    // Outline of the pinned row/column: 1 px black outside, 1 px white inside, visible on any map.
    vec2 to_far = cell_px - inside;  // distance (px) to the cell's bottom-right edge
    float d = 1e9;
    if (hl_row) {
        d = min(d, min(inside.y, to_far.y));
        if (cell.x == 0 || cell.x == int(u_size.x) - 1) d = min(d, cell.x == 0 ? inside.x : to_far.x);
    }
    if (hl_col) {
        d = min(d, min(inside.x, to_far.x));
        if (cell.y == 0 || cell.y == int(u_size.y) - 1) d = min(d, cell.y == 0 ? inside.y : to_far.y);
    }
    if (d < 1.0) {
        rgb = vec3(0.0);
    } else if (d < 2.0) {
        rgb = vec3(1.0);
    }
    frag_color = vec4(rgb, 1.0);
}
