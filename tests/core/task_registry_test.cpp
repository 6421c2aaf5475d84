// The table of training tasks (core/task_registry): every task is found by name and makes the task its
// generator makes; option values outside their range are refused naming the option.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "core/task_registry.hpp"

namespace attnviz {
namespace {

TEST(TaskRegistry, EveryTaskIsFoundAndMadeWithItsDefaults) {
    std::set<std::string> names, flags;
    for (const TaskInfo& t : task_registry()) {
        EXPECT_TRUE(names.insert(t.name).second) << t.name << " twice";
        EXPECT_EQ(find_task(t.name), &t);
        EXPECT_FALSE(t.label.empty()) << t.name;
        EXPECT_FALSE(t.description.empty()) << t.name;
        EXPECT_TRUE(t.make) << t.name;
        for (const TaskOption& o : t.options) EXPECT_EQ(o.flag.rfind("--", 0), 0u) << t.name << " " << o.key;
        if (t.file_option()) continue;  // made from a text (io/task_text.hpp)
        TaskRequest r;
        const Task task = make_task(t, r);
        EXPECT_EQ(task.name, t.name);
        EXPECT_GE(task.vocab_size, 2) << t.name;
        const TaskBatch b = task.train_batch(2, 7);
        EXPECT_EQ(b.batch.B, 2) << t.name;
        EXPECT_EQ(b.batch.n, task.context) << t.name;
    }
    for (const char* want : {"induction", "copy", "reverse", "sort", "modadd", "text"})
        EXPECT_TRUE(names.count(want)) << want;
    EXPECT_EQ(find_task("nope"), nullptr);
}

TEST(TaskRegistry, MakesWhatTheGeneratorsMake) {
    TaskRequest r;
    r.values["modulus"] = 13;
    const Task modadd = make_task(*find_task("modadd"), r);
    EXPECT_EQ(modadd.vocab_size, 15);  // p + '+' + '='
    TaskRequest s;
    s.vocab_size = 17;
    s.values["length"] = 5;
    const Task copy = make_task(*find_task("copy"), s);
    SequenceTask want;
    want.symbols = 16;
    want.length = 5;
    EXPECT_EQ(copy.train_batch(3, 9).batch.inputs, make_sequence_batch(want, 3, 9).batch.inputs);
}

TEST(TaskRegistry, OutOfRangeOrUnknownOptionsAreRefusedByName) {
    TaskRequest r;
    r.values["modulus"] = 1;
    try {
        (void)make_task(*find_task("modadd"), r);
        FAIL() << "modulus 1 accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("modulus"), std::string::npos) << e.what();
    }
    TaskRequest u;
    u.values["length"] = 4;
    EXPECT_THROW((void)make_task(*find_task("modadd"), u), ConfigError);
    EXPECT_THROW((void)make_task(*find_task("text"), TaskRequest{}), ConfigError);  // no text loader
}

}  // namespace
}  // namespace attnviz
