// Recent files (File ▸ Open lists them): newest first, no duplicates, at most kMaxRecentFiles, kept in
// settings.json; a broken list in the file is ignored entry by entry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/app_state.hpp"
#include "app/settings.hpp"

namespace attnviz::app {
namespace {

TEST(RecentFiles, NewestFirstWithoutDuplicatesAndCapped) {
    std::vector<std::string> r;
    remember_recent(r, "a.json");
    remember_recent(r, "b.json");
    remember_recent(r, "a.json");  // opened again: moves to the front, listed once
    remember_recent(r, "");        // nothing to remember
    EXPECT_EQ(r, (std::vector<std::string>{"a.json", "b.json"}));
    for (int i = 0; i < 20; ++i) remember_recent(r, "s" + std::to_string(i) + ".json");
    ASSERT_EQ(r.size(), kMaxRecentFiles);
    EXPECT_EQ(r.front(), "s19.json");
    EXPECT_EQ(r.back(), "s10.json");
}

TEST(RecentFiles, KeptInSettingsAndBadEntriesDropped) {
    AppState a;
    a.recent_files = {"/x/one.json", "two.json"};
    AppState b;
    ASSERT_TRUE(apply_settings_json(settings_json(a), b));
    EXPECT_EQ(b.recent_files, a.recent_files);

    AppState c;
    ASSERT_TRUE(apply_settings_json(
        R"({"recent_files": ["ok.json", 5, "", null, "also.json", "a", "b", "c", "d", "e", "f", "g", "h", "i"]})",
        c));
    EXPECT_EQ(c.recent_files,
              (std::vector<std::string>{"ok.json", "also.json", "a", "b", "c", "d", "e", "f", "g", "h"}));
    AppState d;
    ASSERT_TRUE(apply_settings_json(R"({"recent_files": "not a list"})", d));
    EXPECT_TRUE(d.recent_files.empty());
}

}  // namespace
}  // namespace attnviz::app
