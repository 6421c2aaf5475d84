// Files are written whole or not at all: a failed write names the path and the reason, leaves any
// earlier file exactly as it was, and leaves no temp file behind.
#include "io/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/test_files.hpp"
#include "core/error.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;

/// A fresh empty directory, removed at the end of the test.
using test::TempDir;

using test::error_of;

TEST(Files, WriteThenReadRoundTripsBinaryBytes) {
    TempDir d;
    const std::string p = d.path + "/a.bin";
    std::string bytes("\x00\x01\xff\n\r abc", 10);
    write_file_atomic(p, bytes);
    EXPECT_EQ(read_file(p), bytes);
    write_file_atomic(p, "shorter");
    EXPECT_EQ(read_file(p), "shorter");
    write_file_atomic(p, "");
    EXPECT_EQ(read_file(p), "");
    EXPECT_EQ(d.entries().size(), 1u);  // no temp files left behind
}

TEST(Files, NewFilesGetUmaskPermissionsAndReplacedFilesKeepTheirMode) {
    TempDir d;
    const std::string p = d.path + "/a.txt";
    const mode_t old_mask = ::umask(022);
    write_file_atomic(p, "x");
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    ::chmod(p.c_str(), 0600);
    write_file_atomic(p, "y");
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ::umask(old_mask);
}

TEST(Files, MissingDirectoryGivesPathAndReason) {
    TempDir d;
    const std::string p = d.path + "/no/such/dir/out.png";
    EXPECT_EQ(error_of([&] { write_file_atomic(p, "x"); }),
              "cannot write " + p + ": No such file or directory");
    EXPECT_EQ(d.entries().size(), 0u);
}

TEST(Files, DirectoryTargetIsRefusedAndLeftAlone) {
    TempDir d;
    fs::create_directory(d.path + "/sub");
    EXPECT_EQ(
        error_of([&] { write_file_atomic(d.path + "/sub", "x"); }),
        "cannot write " + d.path + "/sub: it is a directory, not a regular file; choose another file name");
    EXPECT_TRUE(fs::is_directory(d.path + "/sub"));
    EXPECT_EQ(d.entries().size(), 1u);
}

TEST(Files, UnwritableDirectoryLeavesNothing) {
    if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
    TempDir d;
    ::chmod(d.path.c_str(), 0555);
    const std::string p = d.path + "/out.txt";
    EXPECT_EQ(error_of([&] { write_file_atomic(p, "x"); }), "cannot write " + p + ": Permission denied");
    ::chmod(d.path.c_str(), 0755);
    EXPECT_EQ(d.entries().size(), 0u);
}

TEST(Files, FailedWriteLeavesExistingFileUntouchedAndNoTemp) {
    // Make the write itself fail half-way (works even as root): limit the file size the process may
    // write, and ignore the signal so write() returns EFBIG instead of killing us.
    TempDir d;
    const std::string p = d.path + "/existing.txt";
    write_file_atomic(p, "the old contents");
    struct rlimit old_limit {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old_limit;
    small.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const std::string msg = error_of([&] { write_file_atomic(p, std::string(100000, 'n')); });
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(msg, "cannot write " + p + ": File too large");
    EXPECT_EQ(read_file(p), "the old contents");
    EXPECT_EQ(d.entries().size(), 1u);
}

TEST(Files, ReadErrorsNameTheFile) {
    TempDir d;
    EXPECT_EQ(error_of([&] { read_file(d.path + "/nope"); }),
              "cannot read " + d.path + "/nope: No such file or directory");
    EXPECT_EQ(error_of([&] { read_file(d.path); }),
              "cannot read " + d.path + ": it is a directory, not a regular file");
}

// Only regular files (or nothing) may be replaced: as root, `render --out /dev/null` used to rename a
// PNG over /dev/null. Never tested on /dev/null itself: a FIFO, a symlink and a directory in a temp dir.
TEST(Files, NonRegularTargetsAreRefusedAndLeftAlone) {
    TempDir d;
    const std::string fifo = d.path + "/fifo", link = d.path + "/link", target = d.path + "/target";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    write_file_atomic(target, "old");
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    EXPECT_EQ(error_of([&] { write_file_atomic(fifo, "x"); }),
              "cannot write " + fifo + ": it is a FIFO, not a regular file; choose another file name");
    EXPECT_EQ(
        error_of([&] { write_file_atomic(link, "x"); }),
        "cannot write " + link + ": it is a symbolic link, not a regular file; choose another file name");
    EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(read_file(target), "old");
    EXPECT_EQ(d.entries().size(), 3u);  // no temp file left behind
    // A regular file is still replaced, keeping its mode.
    write_file_atomic(target, "new");
    EXPECT_EQ(read_file(target), "new");
}

// A folder of files is replaced together or not at all (issue 22: train wrote model.safetensors, then
// refused the symlinked config.json, leaving a half-written checkpoint).
TEST(Files, CommitAllReplacesNothingWhenOneTargetMayNotBeReplaced) {
    TempDir d;
    write_file_atomic(d.path + "/a.bin", "old a");
    const std::string precious = d.path + "/precious";
    write_file_atomic(precious, "keep");
    fs::create_symlink(precious, d.path + "/b.json");
    {
        std::vector<StagedFile> files;
        files.push_back(stage_file(d.path + "/a.bin", "new a"));
        EXPECT_THROW(files.push_back(stage_file(d.path + "/b.json", "new b")), Error);  // refused at once
        files.clear();
    }
    EXPECT_EQ(read_file(d.path + "/a.bin"), "old a");
    EXPECT_EQ(d.entries().size(), 3u);  // a.bin, precious, b.json: no temporaries left

    // A target that turns into a symlink after staging: checked again before the first rename.
    std::vector<StagedFile> files;
    files.push_back(stage_file(d.path + "/a.bin", "new a"));
    files.push_back(stage_file(d.path + "/c.json", "new c"));
    fs::create_symlink(precious, d.path + "/c.json");
    const std::string msg = error_of([&] { commit_all(files); });
    EXPECT_NE(msg.find("c.json: it is a symbolic link, not a regular file"), std::string::npos) << msg;
    files.clear();
    EXPECT_EQ(read_file(d.path + "/a.bin"), "old a");
    EXPECT_EQ(read_file(precious), "keep");
    EXPECT_EQ(d.entries().size(), 4u);

    // All replaceable: all replaced.
    fs::remove(d.path + "/c.json");
    std::vector<StagedFile> ok;
    ok.push_back(stage_file(d.path + "/a.bin", "new a"));
    ok.push_back(stage_file(d.path + "/c.json", "new c"));
    commit_all(ok);
    EXPECT_EQ(read_file(d.path + "/a.bin"), "new a");
    EXPECT_EQ(read_file(d.path + "/c.json"), "new c");
    EXPECT_EQ(d.entries().size(), 4u);
}

TEST(Files, WriteInChunks) {
    TempDir d;
    int calls = 0;
    write_file_atomic_chunks(d.path + "/c", [&](std::string& chunk) {
        chunk = "part" + std::to_string(calls);
        return ++calls < 3;
    });
    EXPECT_EQ(read_file(d.path + "/c"), "part0part1part2");
    // A generator that throws leaves nothing behind.
    EXPECT_THROW(write_file_atomic_chunks(d.path + "/e", [](std::string&) -> bool { throw Error("boom"); }),
                 Error);
    EXPECT_EQ(d.entries().size(), 1u);
}

// read_file refuses FIFOs (without blocking on them), directories and devices, and files above the
// caller's cap -- before reading them: `--scene /dev/zero` used to grow to 8 GiB.
TEST(Files, ReadRefusesNonRegularFilesAndFilesAboveTheCap) {
    TempDir d;
    const std::string fifo = d.path + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    EXPECT_EQ(error_of([&] { read_file(fifo); }),
              "cannot read " + fifo + ": it is a FIFO, not a regular file");
    EXPECT_EQ(error_of([&] { read_file("/dev/zero"); }),
              "cannot read /dev/zero: it is a character device, not a regular file");
    // A sparse 2 GiB file costs no disk and is refused from its size alone.
    const std::string big = d.path + "/big";
    {
        const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, off_t(2) << 30), 0);
        ::close(fd);
    }
    EXPECT_EQ(error_of([&] { read_file(big); }), "cannot read " + big + ": too large (2048 MiB > 64 MiB)");
    write_file_atomic(d.path + "/small", std::string(2000, 'x'));
    EXPECT_EQ(error_of([&] { read_file(d.path + "/small", 1000); }),
              "cannot read " + d.path + "/small: too large (2000 bytes > 1000 bytes)");
    EXPECT_EQ(read_file(d.path + "/small", 2000).size(), 2000u);
}

TEST(Files, MakeDirsCreatesParentsAndIsIdempotent) {
    TempDir d;
    const std::string p = d.path + "/a/b/c";
    make_dirs(p);
    EXPECT_TRUE(fs::is_directory(p));
    make_dirs(p);
    make_dirs(p + "/");
    write_file_atomic(d.path + "/file", "x");
    EXPECT_NE(error_of([&] { make_dirs(d.path + "/file/sub"); }).find("cannot create directory"),
              std::string::npos);
}

TEST(Files, Slug) {
    EXPECT_EQ(slug("W_Q"), "W_Q");
    EXPECT_EQ(slug("head 2/3"), "head_2_3");
    EXPECT_EQ(slug("scores  (h0)"), "scores_h0");
    EXPECT_EQ(slug("../etc/passwd"), "_._etc_passwd");
    EXPECT_EQ(slug("毛茸茸"), "untitled");
    EXPECT_EQ(slug(""), "untitled");
    EXPECT_EQ(slug("Q·Kᵀ"), "Q_K");
}

TEST(Files, TimestampLooksLikeDateDashTime) {
    const std::string t = timestamp_for_filename();
    ASSERT_EQ(t.size(), 15u) << t;
    EXPECT_EQ(t[8], '-');
    for (std::size_t i = 0; i < t.size(); ++i)
        if (i != 8) {
            EXPECT_TRUE(t[i] >= '0' && t[i] <= '9') << t;
        }
}

TEST(Files, AssetDirHonoursEnvironmentThenFindsScenes) {
    ::setenv("ATTNVIZ_ASSETS", "/some/where", 1);
    EXPECT_EQ(asset_dir(), "/some/where");
    ::unsetenv("ATTNVIZ_ASSETS");
    // Without the variable we find the real assets (next to the build or compiled in).
    EXPECT_TRUE(fs::is_directory(asset_dir() + "/scenes")) << asset_dir();
    ::setenv("ATTNVIZ_SHADERS", "/shaders/here", 1);
    EXPECT_EQ(shader_dir(), "/shaders/here");
    EXPECT_EQ(find_shader_dir().how, "$ATTNVIZ_SHADERS");
    ::unsetenv("ATTNVIZ_SHADERS");
    EXPECT_FALSE(shader_dir().empty());
}

TEST(Files, DataIsFoundInTheInstalledLayoutRelativeToTheExecutable) {
    // The build tree mirrors <prefix>/share/attnviz (links into the source tree), so the test binary
    // finds its data exactly as an installed <prefix>/bin/attnviz would: nothing absolute compiled in.
    ::unsetenv("ATTNVIZ_ASSETS");
    ::unsetenv("ATTNVIZ_SHADERS");
    const ResourceDir assets = find_asset_dir(), shaders = find_shader_dir();
    EXPECT_EQ(assets.how, "next to the executable") << assets.path;
    EXPECT_EQ(shaders.how, "next to the executable") << shaders.path;
    const std::string tail = "/share/attnviz/assets";
    ASSERT_GE(assets.path.size(), tail.size());
    EXPECT_EQ(assets.path.substr(assets.path.size() - tail.size()), tail);
    EXPECT_EQ(assets.path.find("/../"), std::string::npos) << assets.path;  // shown cleaned
    EXPECT_TRUE(fs::is_regular_file(shaders.path + "/heatmap.frag")) << shaders.path;
    EXPECT_TRUE(fs::is_regular_file(assets.path + "/scenes/default.json")) << assets.path;
}

TEST(Files, UserConfigDirFollowsXdgAndIsCreated) {
    TempDir d;
    const char* old = std::getenv("XDG_CONFIG_HOME");
    const std::string saved = old ? old : "";
    ::setenv("XDG_CONFIG_HOME", (d.path + "/cfg").c_str(), 1);
    EXPECT_EQ(user_config_dir(), d.path + "/cfg/attnviz");
    EXPECT_TRUE(fs::is_directory(d.path + "/cfg/attnviz"));
    if (old)
        ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
    else
        ::unsetenv("XDG_CONFIG_HOME");
}

}  // namespace
}  // namespace attnviz
