// Fuzz harness: scene JSON (parse_scene on arbitrary bytes). Either attnviz::Error with one line, or
// a scene that saves and loads back to the same config; validate() must then be fast and bounded.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace attnviz;
    const std::string text(reinterpret_cast<const char*>(data), size);
    Scene scene;
    try {
        scene = parse_scene(text, "fuzz.json");
    } catch (const Error& e) {
        FUZZ_CHECK(std::string(e.what()).rfind("fuzz.json", 0) == 0);  // names the file
        return 0;
    }
    (void)validate(scene.config);
    std::string saved;
    try {
        saved = scene_json(scene);
    } catch (const Error&) {
        return 0;  // invalid UTF-8 in a title, note or text cannot be saved: a clear message
    }
    const Scene again = parse_scene(saved, "saved.json");
    FUZZ_CHECK(again.title == scene.title && again.note == scene.note);
    for (const std::string& key : config_keys())
        FUZZ_CHECK(get_config_key(again.config, key) == get_config_key(scene.config, key));
    return 0;
}
