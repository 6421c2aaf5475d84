// `attnviz dump`: every stage as .npy plus a manifest; the output directory appears whole or not at
// all, replaces only an earlier dump, and every mistake is one line on stderr.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/matrix_expect.hpp"
#include "common/run_command.hpp"
#include "common/test_files.hpp"
#include "core/trace.hpp"
#include "io/commands.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"
#include "io/scene.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using test::TempDir;

using Result = test::CommandResult;

Result dump(std::vector<std::string> args) {
    return test::run_command("dump", std::move(args), run_dump_command);
}

/// A failed dump prints exactly one line starting "attnviz dump: " and exits non-zero.
void expect_dump_error(const Result& r, const std::string& must_contain) {
    test::expect_one_line_error(r, "dump", must_contain);
}

TEST(Dump, WritesEveryStageAndAManifest) {
    TempDir d;
    const std::string out = d.path + "/out";
    const Result r = dump({"--out", out, "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("wrote "), std::string::npos);
    EXPECT_EQ(d.entries(), std::set<std::string>{"out"});  // no temp directory left beside it

    const json m = json::parse(read_file(out + "/manifest.json"));
    const Trace trace = compute_trace(default_scene().config);
    EXPECT_EQ(m["attnviz_dump"], 1);
    EXPECT_EQ(m["n"], trace.n);
    EXPECT_EQ(m["m"], trace.m);
    EXPECT_EQ(m["d_model"], trace.d_model);
    EXPECT_EQ(m["heads"], trace.heads);
    EXPECT_EQ(m["d_k"], trace.d_k);
    EXPECT_EQ(m["d_v"], trace.d_v);
    EXPECT_EQ(m["query_tokens"].get<std::vector<std::string>>(), *trace.query_tokens);
    EXPECT_EQ(m["key_tokens"].get<std::vector<std::string>>(), *trace.key_tokens);
    for (const std::string& key : config_keys()) EXPECT_TRUE(m["config"].contains(key)) << key;
    EXPECT_EQ(m["config"]["text"], kDefaultSentence);
    EXPECT_EQ(m["config"]["heads"], 4);

    ASSERT_EQ(m["stages"].size(), trace.stages.size());
    std::set<std::string> files{"manifest.json"};
    for (std::size_t k = 0; k < trace.stages.size(); ++k) {
        const Stage& s = trace.stages[k];
        const json& e = m["stages"][k];
        SCOPED_TRACE(s.name + " head " + std::to_string(s.head));
        EXPECT_EQ(e["name"], s.name);
        if (s.head >= 0) {
            EXPECT_EQ(e["head"], s.head);
            EXPECT_EQ(e["file"], s.name + "_h" + std::to_string(s.head) + ".npy");
        } else {
            EXPECT_TRUE(e["head"].is_null());
            EXPECT_EQ(e["file"], s.name + ".npy");
        }
        EXPECT_EQ(e["shape"], json::array({s.n_rows(), s.n_cols()}));
        EXPECT_EQ(e["formula"], s.formula);
        EXPECT_EQ(e["title"], s.title);
        EXPECT_TRUE(e["kind"] == "signed" || e["kind"] == "probability" || e["kind"] == "non_negative" ||
                    e["kind"] == "indicator");
        const std::string file = e["file"];
        files.insert(file);
        const Mat M = read_npy(out + "/" + file);
        EXPECT_MATRIX_NEAR(M, s.matrix(), 0.0);  // same numbers as the trace, bit for bit
    }
    std::set<std::string> on_disk;
    for (const auto& e : fs::directory_iterator(out)) on_disk.insert(e.path().filename().string());
    EXPECT_EQ(on_disk, files);
    // Stage names the reference script relies on.
    for (const char* name :
         {"input", "W_Q", "Q", "scores", "weights", "head_output", "concat", "W_O", "output"})
        EXPECT_NE(trace.find(name, 0), -1) << name;
    EXPECT_EQ(m["stages"][0]["kind"], "indicator");  // one_hot
}

TEST(Dump, SetsAndScenesChangeTheConfig) {
    TempDir d;
    Scene s = default_scene();
    s.config.text = "the cat sat";
    save_scene(d.path + "/s.json", s);
    const Result r = dump(
        {"--scene", d.path + "/s.json", "--set", "heads=2", "--set", "mask=causal", "--out", d.path + "/o"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json m = json::parse(read_file(d.path + "/o/manifest.json"));
    EXPECT_EQ(m["config"]["heads"], 2);
    EXPECT_EQ(m["config"]["mask"], "causal");
    EXPECT_EQ(m["n"], 3);
    EXPECT_EQ(m["query_tokens"], json::array({"the", "cat", "sat"}));
    const Mat A = read_npy(d.path + "/o/weights_h1.npy");  // 3 x 3, causal: nothing above the diagonal
    ASSERT_EQ(A.rows(), 3);
    EXPECT_EQ(A(0, 1), 0.0f);
    EXPECT_EQ(A(0, 2), 0.0f);
    EXPECT_EQ(A(1, 2), 0.0f);
    EXPECT_NEAR(A.row(2).sum(), 1.0f, 1e-6f);
    EXPECT_FALSE(fs::exists(d.path + "/o/weights_h2.npy"));
    // The masked scores hold −∞ above the diagonal, and .npy keeps it.
    EXPECT_TRUE(std::isinf(read_npy(d.path + "/o/masked_h0.npy")(0, 2)));
}

TEST(Dump, CrossAttentionHasRectangularWeights) {
    TempDir d;
    const Result r = dump(
        {"--set", "text=the black cat", "--set", "source_text=le chat noir dort", "--out", d.path + "/x"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json m = json::parse(read_file(d.path + "/x/manifest.json"));
    EXPECT_EQ(m["n"], 3);
    EXPECT_EQ(m["m"], 4);
    EXPECT_EQ(m["key_tokens"], json::array({"le", "chat", "noir", "dort"}));
    const Mat A = read_npy(d.path + "/x/weights_h0.npy");
    EXPECT_EQ(A.rows(), 3);
    EXPECT_EQ(A.cols(), 4);
    EXPECT_TRUE(fs::exists(d.path + "/x/source.npy"));
}

TEST(Dump, ReplacesAnEarlierDumpButNothingElse) {
    TempDir d;
    const std::string out = d.path + "/o";
    ASSERT_EQ(dump({"--out", out}).code, 0);
    EXPECT_TRUE(fs::exists(out + "/weights_h3.npy"));
    ASSERT_EQ(dump({"--out", out + "/", "--set", "heads=1"}).code, 0);
    EXPECT_FALSE(fs::exists(out + "/weights_h3.npy"));  // the old dump is gone, not merged
    EXPECT_TRUE(fs::exists(out + "/weights_h0.npy"));
    EXPECT_EQ(json::parse(read_file(out + "/manifest.json"))["heads"], 1);
    EXPECT_EQ(d.entries(), std::set<std::string>{"o"});

    // An empty directory (e.g. made by `mkdir`) is fine too.
    fs::create_directory(d.path + "/empty");
    ASSERT_EQ(dump({"--out", d.path + "/empty"}).code, 0);
    EXPECT_TRUE(fs::exists(d.path + "/empty/manifest.json"));

    // A directory with someone's files is never touched.
    fs::create_directory(d.path + "/mine");
    write_file_atomic(d.path + "/mine/thesis.tex", "precious");
    Result r = dump({"--out", d.path + "/mine"});
    expect_dump_error(r, "is not an earlier attnviz dump");
    EXPECT_EQ(read_file(d.path + "/mine/thesis.tex"), "precious");
    EXPECT_EQ(std::distance(fs::directory_iterator(d.path + "/mine"), fs::directory_iterator()), 1);

    // Nor is a directory whose manifest.json is not ours.
    write_file_atomic(d.path + "/mine/manifest.json", "{\"name\": \"my package\"}");
    expect_dump_error(dump({"--out", d.path + "/mine"}), "is not an earlier attnviz dump");

    // Nor an earlier dump someone has put their own things into: it would be replaced whole (a cold
    // try found notes.txt, a FIFO, a symlink and a folder deleted with exit 0).
    ASSERT_EQ(dump({"--out", d.path + "/o"}).code, 0);
    write_file_atomic(d.path + "/o/notes.txt", "mine");
    expect_dump_error(dump({"--out", d.path + "/o"}), "holds notes.txt, which attnviz did not write there");
    EXPECT_EQ(read_file(d.path + "/o/notes.txt"), "mine");
    fs::remove(d.path + "/o/notes.txt");
    ASSERT_EQ(::mkfifo((d.path + "/o/loss.npy").c_str(), 0600), 0);
    expect_dump_error(dump({"--out", d.path + "/o"}), "holds loss.npy, which attnviz did not write there");
    fs::remove(d.path + "/o/loss.npy");
    fs::create_symlink(d.path + "/file-elsewhere", d.path + "/o/w.npy");
    expect_dump_error(dump({"--out", d.path + "/o"}), "holds w.npy");
    fs::remove(d.path + "/o/w.npy");
    fs::create_directory(d.path + "/o/photos");
    expect_dump_error(dump({"--out", d.path + "/o"}), "holds photos");
    fs::remove(d.path + "/o/photos");
    ASSERT_EQ(dump({"--out", d.path + "/o"}).code, 0);  // what it wrote itself it replaces
    // A symlink as --out is named as one.
    fs::create_directory_symlink(d.path + "/empty", d.path + "/link");
    expect_dump_error(dump({"--out", d.path + "/link"}), "is a symbolic link");
    fs::remove(d.path + "/link");

    // Nor a file.
    write_file_atomic(d.path + "/file", "data");
    expect_dump_error(dump({"--out", d.path + "/file"}), "is not a directory");
    EXPECT_EQ(read_file(d.path + "/file"), "data");
    EXPECT_EQ(d.entries(), (std::set<std::string>{"o", "empty", "mine", "file"}));
}

TEST(Dump, CreatesMissingParentDirectories) {
    TempDir d;
    ASSERT_EQ(dump({"--out", d.path + "/a/b/c"}).code, 0);
    EXPECT_TRUE(fs::exists(d.path + "/a/b/c/manifest.json"));
}

TEST(Dump, MistakesAreOneLineAndLeaveNothing) {
    TempDir d;
    const std::string out = d.path + "/o";
    struct Case {
        std::vector<std::string> args;
        std::string says;
        int code;
    };
    const std::vector<Case> cases = {
        {{}, "missing --out DIR", 2},
        {{"--out"}, "--out needs a value", 2},
        {{"--out", out, "--hedas", "2"}, "unknown option --hedas", 2},
        {{"--out", out, "--threads", "many"}, "--threads: expected an integer", 2},
        {{"--out", out, "--set", "heads"}, "--set expects KEY=VALUE, got 'heads'", 2},
        {{"--out", out, "--set", "hedas=2"}, "hedas", 1},
        {{"--out", out, "--set", "heads=two"}, "heads", 1},
        {{"--out", out, "--set", "heads=3"}, "heads", 1},  // 3 does not divide d_model = 64
        {{"--out", out, "--set", "temperature=0"}, "temperature", 1},
        {{"--out", out, "--set", "text=   "}, "text", 1},
        {{"--out", out, "--set", "text=\xff\xfe"}, "UTF-8", 1},
        {{"--out", out, "--scene", d.path + "/missing.json"}, "cannot read " + d.path + "/missing.json", 1},
        {{"--out", out, "stray"}, "unexpected argument 'stray'", 2},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(::testing::PrintToString(c.args));
        const Result r = dump(c.args);
        expect_dump_error(r, c.says);
        EXPECT_EQ(r.code, c.code);
        EXPECT_EQ(r.out, "");
        EXPECT_TRUE(d.entries().empty()) << "left " << ::testing::PrintToString(d.entries());
    }
    // Several problems at once still make one line.
    const Result r = dump({"--out", out, "--set", "heads=3", "--set", "temperature=-1"});
    expect_dump_error(r, "temperature");
    EXPECT_TRUE(d.entries().empty());
}

TEST(Dump, WriteFailureMidwayLeavesNoTempDirectory) {
    // Limit the size of files this process may write (works as root too): the first .npy larger than
    // the limit fails, and the half-written dump must vanish.
    TempDir d;
    struct rlimit old_limit {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old_limit;
    small.rlim_cur = 2000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const Result r = dump({"--out", d.path + "/o"});
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    expect_dump_error(r, "File too large");
    EXPECT_TRUE(d.entries().empty()) << ::testing::PrintToString(d.entries());

    // And an earlier dump survives a failed replacement.
    ASSERT_EQ(dump({"--out", d.path + "/o", "--set", "heads=2"}).code, 0);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    old_handler = std::signal(SIGXFSZ, SIG_IGN);
    const Result r2 = dump({"--out", d.path + "/o"});
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_NE(r2.code, 0);
    EXPECT_EQ(json::parse(read_file(d.path + "/o/manifest.json"))["heads"], 2);
    EXPECT_EQ(d.entries(), std::set<std::string>{"o"});
}

TEST(Dump, HelpPrintsUsage) {
    const Result r = dump({"--help"});
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out.rfind("usage: attnviz dump", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("--set KEY=VALUE"), std::string::npos);
    EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace attnviz
