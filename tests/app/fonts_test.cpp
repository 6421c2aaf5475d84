// Every character the labs, the stage titles/formulas/explanations and the cell explanations can
// show must be (1) in the atlas's base glyph ranges, so it is baked before the first frame, and
// (2) drawn by DejaVu Sans or the Droid Sans Fallback merged into it — otherwise ImGui shows "?".
// The strings come from the real core functions, not from a copy of them.
#include <gtest/gtest.h>
#include <stb_truetype.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/fonts.hpp"
#include "app/panels/lab_common.hpp"
#include "core/explain.hpp"
#include "core/labs.hpp"
#include "core/trace.hpp"
#include "io/font_raster.hpp"

namespace attnviz::app {
namespace {

struct LoadedFont {
    std::vector<unsigned char> bytes;
    stbtt_fontinfo info{};
    bool ok = false;
};

LoadedFont load(const char* path) {
    LoadedFont f;
    std::ifstream in(path, std::ios::binary);
    f.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!f.bytes.empty())
        f.ok = stbtt_InitFont(&f.info, f.bytes.data(), stbtt_GetFontOffsetForIndex(f.bytes.data(), 0)) != 0;
    return f;
}

// Code point -> where it was found (first place), for a readable failure message.
using Seen = std::map<char32_t, std::string>;

void collect(Seen& seen, const std::string& text, const std::string& where) {
    for (char32_t c : utf8_decode(text))
        if (c >= 0x80 && !seen.count(c)) seen[c] = where + ": \"" + text.substr(0, 80) + "\"";
}

void collect_trace(Seen& seen, const Config& cfg, const std::string& what) {
    const Trace tr = compute_trace(cfg);
    for (int s = 0; s < int(tr.stages.size()); ++s) {
        const Stage& st = tr.stages[s];
        collect(seen, st.title, what + " title");
        collect(seen, st.formula, what + " formula");
        collect(seen, st.explanation, what + " explanation");
        collect(seen, st.rows.name, what + " axis");
        collect(seen, st.cols.name, what + " axis");
        if (st.n_rows() > 0 && st.n_cols() > 0)
            for (const std::string& line : explain_cell(tr, s, 0, st.n_cols() - 1))
                collect(seen, line, what + " explain " + st.name);
    }
}

Seen all_shown_text() {
    Seen seen;
    for (LabId id : all_labs()) {
        const LabText& t = lab_text(id);
        collect(seen, t.title, "lab title");
        collect(seen, lab_display_text(t.intro), "lab intro");
        for (const LabSection& s : t.sections) {
            collect(seen, s.heading, "lab heading");
            collect(seen, lab_display_text(s.formula), "lab formula");
            collect(seen, lab_display_text(s.explanation), "lab explanation");
        }
    }
    for (const auto& f : positional_encoding_lab(PeLabParams{}).findings) collect(seen, f, "PE findings");
    for (const auto& f : nadaraya_watson_lab(NwLabParams{}).findings) collect(seen, f, "NW findings");
    for (const auto& f : temperature_lab(TemperatureLabParams{}).findings) collect(seen, f, "T findings");
    for (const auto& f : softmax_vs_linear_lab(LinearLabParams{}).findings)
        collect(seen, f, "linear findings");
    for (const auto& f : size_lab(SizeLabParams{}).findings) collect(seen, f, "size findings");

    Config cfg;
    cfg.d_model = 16;
    cfg.heads = 2;
    collect_trace(seen, cfg, "default trace");
    Config rope = cfg;
    rope.positional = Positional::Rope;
    rope.mask = MaskKind::Causal;
    rope.layernorm = LayerNormMode::Pre;
    collect_trace(seen, rope, "RoPE trace");
    Config lin = cfg;
    lin.attention = AttentionKind::Linear;
    lin.positional = Positional::Alibi;
    collect_trace(seen, lin, "linear trace");
    Config add = cfg;
    add.scoring = Scoring::Additive;
    add.source_text = "un chat";
    collect_trace(seen, add, "cross-attention trace");
    return seen;
}

TEST(Fonts, EveryShownCharacterIsInTheBaseRangesAndInAFont) {
    int count = 0;
    const char* const* files = font_files(&count);
    ASSERT_EQ(count, 4);
    const LoadedFont sans = load(files[0]), bold = load(files[1]), fallback = load(files[3]);
    if (!sans.ok) GTEST_SKIP() << "DejaVu Sans not installed (" << files[0] << ")";

    const Seen seen = all_shown_text();
    // The labs and stages do use formulas: the scan must have found their characters.
    for (char32_t c : {U'√', U'Σ', U'ᵀ', U'ⱼ', U'−'}) EXPECT_TRUE(seen.count(c)) << std::hex << unsigned(c);

    for (const auto& [c, where] : seen) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "U+%04X", unsigned(c));
        EXPECT_TRUE(in_base_glyph_ranges(unsigned(c)))
            << hex << " is not in the atlas's base ranges; " << where;
        const bool in_sans = stbtt_FindGlyphIndex(&sans.info, int(c)) != 0;
        const bool in_fallback = fallback.ok && stbtt_FindGlyphIndex(&fallback.info, int(c)) != 0;
        EXPECT_TRUE(in_sans || in_fallback) << hex << " has no glyph in DejaVu Sans or Droid; " << where;
        if (bold.ok) {
            EXPECT_TRUE(stbtt_FindGlyphIndex(&bold.info, int(c)) != 0 || in_fallback)
                << hex << " has no bold glyph (headings); " << where;
        }
    }
}

TEST(Fonts, BaseRangesHoldTheFormulaCharacters) {
    for (char32_t c : {U'f', U'\u0302', U'ŷ', U'ⱼ', U'ᵀ', U'√', U'⊙', U'∞', U'，', U'あ', U'ア'})
        EXPECT_TRUE(in_base_glyph_ranges(unsigned(c))) << std::hex << unsigned(c);
    EXPECT_FALSE(in_base_glyph_ranges(0x4E2D));  // 中: Han is baked on demand (add_text)
    EXPECT_FALSE(in_base_glyph_ranges(0x1F600));
}

TEST(Fonts, LabTextShowsPrecomposedHatInsteadOfCombiningMark) {
    EXPECT_EQ(lab_display_text("f\u0302(x) = A·y"), "\u0177(x) = A·y");
    EXPECT_EQ(lab_display_text("f\u0302 and f\u0302"), "\u0177 and \u0177");
    EXPECT_EQ(lab_display_text("q\u0303_p"), "q\u0303_p");  // other marks untouched
    EXPECT_EQ(lab_display_text(""), "");
    // The scoring lab's formula really contains f̂, and the UI shows no combining mark in it.
    bool found = false;
    for (const LabSection& s : lab_text(LabId::NadarayaWatson).sections)
        if (s.formula.find("f\u0302") != std::string::npos) {
            found = true;
            EXPECT_EQ(lab_display_text(s.formula).find("\u0302"), std::string::npos);
        }
    EXPECT_TRUE(found);
}

}  // namespace
}  // namespace attnviz::app
