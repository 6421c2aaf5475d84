// safetensors files (the Hugging Face checkpoint format): an 8-byte little-endian header length N, N
// bytes of a JSON object {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
// {string: string}} (padded with spaces), then the data section; offsets count from its start.
//
// The reader maps the file read-only and validates the header completely before anything uses it:
// length bound, '{' first, JSON (nesting capped, no key twice), known dtype, shape × dtype size = byte
// range, every range inside the data section, the ranges tiling it exactly (contiguous, no gap, no
// overlap, nothing after the last tensor — as the Rust crate behind the Python library enforces), no
// NUL in a name, `__metadata__` values strings. Every refusal is one attnviz::Error line naming the file
// and the tensor. F32, F16 and BF16 tensors convert to float32.
//
// The writer produces what the Python library's save_file produces, byte for byte: tensors ordered by
// dtype (F32, then BF16, then F16) and then by name, compact JSON with `__metadata__` first, header
// padded with spaces to a multiple of 8 bytes, little-endian data. Floats round to nearest-even.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/files.hpp"

namespace attnviz {

/// Largest safetensors header accepted (real ones are a few hundred KiB; the Rust crate's limit too).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;
/// Largest file write_safetensors produces and largest to_float32 result: the app's 3 GiB memory limit.
inline constexpr std::uint64_t kMaxSafetensorsBytes = 3ull << 30;

/// Bytes per element of a safetensors dtype ("F32" → 4, "BF16" → 2), 0 for an unknown one.
std::uint64_t safetensors_dtype_size(std::string_view dtype);

/// One tensor of a mapped file. `data` points into the file's mapping: valid while the
/// SafetensorsFile (or a copy of its `owner()`) lives.
struct SafetensorsTensor {
    std::string name;
    std::string dtype;                    // as the header says: "F32", "BF16", "F16", "I64", ...
    std::vector<std::int64_t> shape;      // [] for a scalar
    const unsigned char* data = nullptr;  // [end - begin] bytes, little-endian, maybe unaligned
    std::uint64_t begin = 0, end = 0;     // byte range in the data section
    std::string file;                     // for messages

    std::uint64_t bytes() const { return end - begin; }
    std::uint64_t count() const;  // number of elements (product of shape)
};

/// A validated, memory-mapped safetensors file.
class SafetensorsFile {
  public:
    /// Maps and validates `path` (a regular file). Throws attnviz::Error.
    static SafetensorsFile open(const std::string& path);
    /// Validates a file held in memory (fuzzing, tests); `name` is used in messages.
    static SafetensorsFile from_bytes(std::string bytes, const std::string& name);

    const std::string& path() const { return path_; }
    /// Every tensor, in data order (by byte range).
    const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
    /// The tensor called `name`, or nullptr. O(log n): a caller may look up every tensor.
    const SafetensorsTensor* find(const std::string& name) const;
    /// `__metadata__` (empty when absent or null).
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    /// Keeps the mapping (and so every tensor's `data`) alive.
    const std::shared_ptr<const void>& owner() const { return owner_; }

  private:
    static SafetensorsFile parse(std::shared_ptr<const void> owner, const unsigned char* base,
                                 std::uint64_t size, const std::string& path);
    std::string path_;
    std::vector<SafetensorsTensor> tensors_;
    std::vector<std::size_t> by_name_;  // indices into tensors_, sorted by name (names are unique)
    std::map<std::string, std::string> metadata_;
    std::shared_ptr<const void> owner_;
};

/// The tensors of a checkpoint folder: DIR/model.safetensors, else every shard named by
/// DIR/model.safetensors.index.json ("weight_map": {tensor: shard file}). A tensor in two files, a
/// shard that is not a plain file name in DIR, or a weight_map entry whose shard lacks the tensor is
/// refused.
struct SafetensorsTable {
    std::map<std::string, SafetensorsTensor> tensors;
    std::vector<SafetensorsFile> files;  // keep them: the tensors point into their mappings
};
SafetensorsTable open_safetensors_dir(const std::string& dir);

/// The tensor's values as float32 (F32, BF16, F16; anything else is refused naming the tensor).
/// `out` holds t.count() floats.
void to_float32(const SafetensorsTensor& t, float* out);
/// Same, into a new vector (refused beyond kMaxSafetensorsBytes).
std::vector<float> to_float32(const SafetensorsTensor& t);

/// IEEE half / bfloat16 bit patterns ↔ float. To half and bfloat16: round to nearest, ties to even;
/// overflow gives ±inf; NaN gives the quiet NaN PyTorch gives (sign | 0x7e00, and 0x7fc0).
float f16_to_float(std::uint16_t h);
float bf16_to_float(std::uint16_t b);
std::uint16_t float_to_f16(float f);
std::uint16_t float_to_bf16(float f);

/// One tensor to write: `count` floats at `data` (C order), stored as `dtype` ("F32", "F16", "BF16").
struct SafetensorsWriteTensor {
    std::string name;
    std::string dtype;
    std::vector<std::int64_t> shape;  // [] for a scalar
    const float* data = nullptr;      // [count]
    std::uint64_t count = 0;          // must equal the product of shape
};

/// The header `write_safetensors` writes (8-byte length + padded JSON), for the given tensors.
/// Throws attnviz::Error naming the tensor for a bad name (NUL, invalid UTF-8, "__metadata__",
/// twice), dtype, shape or count, and beyond kMaxSafetensorsBytes.
std::string safetensors_header(const std::vector<SafetensorsWriteTensor>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

/// The whole file write_safetensors writes, in memory (small files: tests, fuzzing).
std::string safetensors_bytes(const std::vector<SafetensorsWriteTensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

/// Writes a safetensors file PyTorch (and the Python library) reads, whole or not at all
/// (write_file_atomic: only a regular file at `path` is replaced). Throws attnviz::Error.
void write_safetensors(const std::string& path, const std::vector<SafetensorsWriteTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});
/// The same file, written beside `path` but not yet in place (io/files.hpp StagedFile): for a folder of
/// files replaced together.
StagedFile stage_safetensors(const std::string& path, const std::vector<SafetensorsWriteTensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

}  // namespace attnviz
