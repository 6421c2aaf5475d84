// NumPy .npy files (format 1.0): little-endian float32 ('<f4'), C order, 2-D. Readable by numpy.load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/shapes.hpp"
#include "core/trace.hpp"

namespace attnviz {

/// What a .npy header says. Numbers only: `kind` is 'f', 'i' or 'u' for a little-endian (or one-byte)
/// float or integer dtype of `item` bytes, 0 for any other dtype (`descr` says which).
struct NpyHeader {
    std::string descr;
    char kind = 0;
    int item = 0;
    bool fortran = false;
    std::vector<std::uint64_t> shape;
    std::uint64_t count = 1;     // elements: the product of shape, at most kMaxNpyElements
    std::size_t data_start = 0;  // offset of the first value
};
/// Most elements any .npy file may declare (2^40): every product of sizes stays far from wrapping.
inline constexpr std::uint64_t kMaxNpyElements = std::uint64_t(1) << 40;
/// Parses magic, version and header of `bytes` (which hold at least the whole header). Throws
/// attnviz::Error(fail_prefix + reason): bad magic, version or dict, a header over kMaxNpyHeaderBytes,
/// more than kMaxNpyElements elements ("array too large (4294967296 x 4294967296)").
NpyHeader parse_npy_header(const std::string& bytes, const std::string& fail_prefix);
/// The header numpy writes for `descr` and `shape` ({} = a scalar), padded so the data starts at a
/// multiple of 64 bytes; growth_room adds numpy 1.24's spaces for the first axis to grow in place.
std::string npy_header_bytes(const std::string& descr, const std::vector<std::uint64_t>& shape,
                             bool growth_room);
/// A '<f4' array of `shape` from `data` (C order), little-endian whatever the host.
std::string npy_f32_bytes(const float* data, const std::vector<std::uint64_t>& shape);
/// A '<f8' scalar (shape ()).
std::string npy_f64_scalar_bytes(double v);

/// The bytes of a .npy file holding M (rows x cols, '<f4', fortran_order False).
std::string npy_bytes(const Mat& M);
/// Writes M atomically (io/files.hpp). Throws attnviz::Error.
void write_npy(const std::string& path, const Mat& M);
/// Parses .npy bytes: accepts 1-D or 2-D, '<f4' or '<f8', C or Fortran order; a 1-D array becomes
/// one column. Throws attnviz::Error("broken .npy file FILE: reason") on anything else.
Mat parse_npy(const std::string& bytes, const std::string& name_for_errors = "input");
/// Largest .npy file read_npy reads (2 GiB + 4 KiB: a 16384² float64 array and its header).
inline constexpr std::uint64_t kMaxNpyFileBytes = (2ull << 30) + 4096;
/// Largest .npy header accepted (numpy writes 128 bytes or a few hundred).
inline constexpr std::size_t kMaxNpyHeaderBytes = 64 * 1024;
Mat read_npy(const std::string& path);

/// A custom attention mask from a .npy file made with numpy: a 2-D array, rows = queries, columns =
/// keys, nonzero = the key is hidden from that query (as in `custom_mask`). Throws attnviz::Error for
/// a broken file, a non-2-D array, NaN values or more than 16384 rows/columns. Streams the file: peak
/// memory is the rows×cols-byte grid plus 1 MiB.
MaskGrid read_mask_npy(const std::string& path);

/// CSV: one row per line, comma-separated, full float precision; -inf written as "-inf".
std::string csv_text(const Mat& M);
void write_csv(const std::string& path, const Mat& M);

/// CSV for slides and spreadsheets: a header row whose first cell is "ROWS \\ COLS" (the axes'
/// names, e.g. "query tokens \\ key tokens") followed by every column's label (key tokens, or
/// dimension indices), then one line per matrix row starting with its label (query tokens). Values
/// as in csv_text(). A label holding a comma, quote, line break or edge space is quoted ("" for ").
std::string csv_text_labelled(const Mat& M, const Axis& rows, const Axis& cols);
void write_csv_labelled(const std::string& path, const Mat& M, const Axis& rows, const Axis& cols);
/// One CSV field: `text` as is, or quoted when it needs to be.
std::string csv_field(const std::string& text);

}  // namespace attnviz
