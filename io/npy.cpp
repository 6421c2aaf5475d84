#include "io/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/platform.hpp"

namespace attnviz {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;         // numpy aligns the data to 64 bytes
constexpr std::size_t kGrowthDigits = 21;  // numpy leaves room to grow the first axis in place

void put_u16le(std::string& out, std::uint16_t v) {
    out += char(v & 0xff);
    out += char((v >> 8) & 0xff);
}

std::uint32_t get_le(const std::string& b, std::size_t at, int bytes) {
    std::uint32_t v = 0;
    for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | std::uint8_t(b[at + std::size_t(k)]);
    return v;
}

[[noreturn]] void broken(const std::string& name, const std::string& reason) {
    throw Error("broken .npy file " + name + ": " + reason);
}

/// Finds `'key':` in the header dict and returns the position just after the colon.
std::size_t find_key(const std::string& header, const std::string& key, const std::string& fail_prefix) {
    for (const char q : {'\'', '"'}) {
        const std::string pattern = std::string(1, q) + key + std::string(1, q);
        auto pos = header.find(pattern);
        if (pos == std::string::npos) continue;
        pos += pattern.size();
        while (pos < header.size() && header[pos] == ' ') ++pos;
        if (pos >= header.size() || header[pos] != ':')
            throw Error(fail_prefix + "bad header (no ':' after '" + key + "')");
        ++pos;
        while (pos < header.size() && header[pos] == ' ') ++pos;
        return pos;
    }
    throw Error(fail_prefix + "bad header (no '" + key + "' entry)");
}

std::size_t npy_prefix_size(const std::string& b, const std::string& fail_prefix);

}  // namespace

NpyHeader parse_npy_header(const std::string& b, const std::string& fail_prefix) {
    auto fail = [&](const std::string& why) -> void { throw Error(fail_prefix + why); };
    const std::size_t prefix = npy_prefix_size(b, fail_prefix);
    if (b.size() < prefix) fail("truncated header");
    if (prefix > kMaxNpyHeaderBytes)
        fail("header of " + std::to_string(prefix) + " bytes (numpy writes a few hundred)");
    const std::size_t header_start = std::uint8_t(b[6]) == 1 ? 10 : 12;
    const std::string header = b.substr(header_start, prefix - header_start);
    if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
        fail("bad header (no dictionary)");
    NpyHeader h;
    h.data_start = prefix;

    std::size_t p = find_key(header, "descr", fail_prefix);
    if (p >= header.size() || (header[p] != '\'' && header[p] != '"'))
        fail("bad header (descr is not a string)");
    const auto descr_end = header.find(header[p], p + 1);
    if (descr_end == std::string::npos) fail("bad header (unterminated descr)");
    h.descr = header.substr(p + 1, descr_end - p - 1);
    // Little-endian ('<'), byte-order-free ('|', one byte) or native ('=', little-endian here) numbers.
    const std::string& d = h.descr;
    if (d.size() == 3 && std::strchr("fiu", d[1]) && d[1] != '\0' && std::strchr("1248", d[2]) &&
        d[2] != '\0') {
        const int item = d[2] - '0';
        const bool order_ok = d[0] == '<' || d[0] == '=' || (d[0] == '|' && item == 1);
        if (order_ok && !(d[1] == 'f' && item < 2)) {
            h.kind = d[1];
            h.item = item;
        }
    }

    p = find_key(header, "fortran_order", fail_prefix);
    if (header.compare(p, 4, "True") == 0)
        h.fortran = true;
    else if (header.compare(p, 5, "False") != 0)
        fail("bad header (fortran_order is neither True nor False)");

    p = find_key(header, "shape", fail_prefix);
    if (p >= header.size() || header[p] != '(') fail("bad header (shape is not a tuple)");
    const auto close = header.find(')', p);
    if (close == std::string::npos) fail("bad header (unterminated shape)");
    h.count = 1;
    std::size_t q = p + 1;
    while (q < close) {
        while (q < close && (header[q] == ' ' || header[q] == ',')) ++q;
        if (q >= close) break;
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(header.data() + q, header.data() + close, v);
        if (ec != std::errc() || end == header.data() + q) fail("bad header (shape is not a tuple of sizes)");
        if (h.shape.size() == 32) fail("bad header (more than 32 dimensions)");
        h.shape.push_back(v);
        // The element count, without ever wrapping: past kMaxNpyElements it stops growing.
        if (v > kMaxNpyElements || (v != 0 && h.count > kMaxNpyElements / v))
            h.count = kMaxNpyElements + 1;
        else if (h.count <= kMaxNpyElements)
            h.count *= v;
        q = std::size_t(end - header.data());
        while (q < close && header[q] == 'L') ++q;  // Python 2 longs
    }
    if (h.count > kMaxNpyElements) {
        std::string dims;
        for (std::size_t i = 0; i < h.shape.size(); ++i)
            dims += (i ? " x " : "") + std::to_string(h.shape[i]);
        fail("array too large (" + dims + ")");
    }
    return h;
}

std::string npy_header_bytes(const std::string& descr, const std::vector<std::uint64_t>& shape,
                             bool growth_room) {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) dims += ",";
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    if (growth_room && !shape.empty()) {
        const std::size_t first = std::to_string(shape[0]).size();
        if (first < kGrowthDigits) header.append(kGrowthDigits - first, ' ');
    }
    const std::size_t hlen = header.size() + 1;                        // + '\n'
    header.append(kAlign - (kMagicLen + 2 + 2 + hlen) % kAlign, ' ');  // numpy's rule: 1..64 spaces
    header += '\n';
    std::string out;
    out.append(kMagic, kMagicLen);
    out += char(1);  // format version 1.0
    out += char(0);
    put_u16le(out, std::uint16_t(header.size()));
    return out + header;
}

std::string npy_f32_bytes(const float* data, const std::vector<std::uint64_t>& shape) {
    std::uint64_t count = 1;
    for (std::uint64_t d : shape) count *= d;
    std::string out = npy_header_bytes("<f4", shape, false);
    const std::size_t at = out.size();
    out.resize(at + std::size_t(count) * 4);
    for (std::uint64_t k = 0; k < count; ++k) {  // little-endian, whatever the host
        std::uint32_t bits;
        std::memcpy(&bits, data + k, 4);
        for (int b = 0; b < 4; ++b)
            out[at + std::size_t(k) * 4 + std::size_t(b)] = char((bits >> (8 * b)) & 0xff);
    }
    return out;
}

std::string npy_f64_scalar_bytes(double v) {
    std::string out = npy_header_bytes("<f8", {}, false);
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int b = 0; b < 8; ++b) out += char((bits >> (8 * b)) & 0xff);
    return out;
}

namespace {

/// Magic, version and header of a 2-D '<f4' C-order array: byte for byte what numpy 1.24 writes for
/// np.save(f, a.astype('<f4')).
std::string npy_header(std::size_t rows, std::size_t cols) {
    return npy_header_bytes("<f4", {rows, cols}, true);
}

/// Appends rows [first, last) of M as little-endian float32 (explicitly, so the file is right on any host).
void append_rows_le(std::string& out, const Mat& M, Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index i = first; i < last; ++i) {
        for (Eigen::Index j = 0; j < M.cols(); ++j) {
            std::uint32_t bits;
            const float v = M(i, j);
            std::memcpy(&bits, &v, 4);
            for (int k = 0; k < 4; ++k) out += char((bits >> (8 * k)) & 0xff);
        }
    }
}

}  // namespace

std::string npy_bytes(const Mat& M) {
    std::string out = npy_header(std::size_t(M.rows()), std::size_t(M.cols()));
    out.reserve(out.size() + std::size_t(M.rows()) * std::size_t(M.cols()) * 4);
    append_rows_le(out, M, 0, M.rows());
    return out;
}

void write_npy(const std::string& path, const Mat& M) {
    // Streamed a block of rows at a time: a 16384² stage is written without a second 1 GiB copy.
    const Eigen::Index rows_per_chunk =
        std::max<Eigen::Index>(1, (Eigen::Index(1) << 18) / std::max<Eigen::Index>(1, M.cols()));
    Eigen::Index row = -1;  // -1: the header comes first
    write_file_atomic_chunks(path, [&](std::string& chunk) {
        if (row < 0) {
            chunk = npy_header(std::size_t(M.rows()), std::size_t(M.cols()));
            row = 0;
        } else {
            const Eigen::Index end = std::min(M.rows(), row + rows_per_chunk);
            append_rows_le(chunk, M, row, end);
            row = end;
        }
        return row < M.rows();
    });
}

namespace {

/// Magic + version + header length field + header, from the first 12 bytes (or fewer: then the
/// file is truncated). Throws for a bad magic or version.
std::size_t npy_prefix_size(const std::string& b, const std::string& fail_prefix) {
    auto fail = [&](const std::string& why) -> void { throw Error(fail_prefix + why); };
    if (b.size() < kMagicLen || b.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
        fail("bad magic (not a NumPy .npy file)");
    if (b.size() < kMagicLen + 4) fail("truncated header");
    const int major = std::uint8_t(b[6]);
    if (major == 1) return 10 + std::size_t(get_le(b, 8, 2));
    if (major == 2 || major == 3) {
        if (b.size() < 12) fail("truncated header");
        return 12 + std::size_t(get_le(b, 8, 4));
    }
    fail("unsupported format version " + std::to_string(major) + "." +
         std::to_string(int(std::uint8_t(b[7]))));
    return 0;
}

/// The float readers' view: a 1-D or 2-D '<f4' / '<f8' array, each axis at most 2^24.
struct FloatHeader {
    int item = 4;
    bool fortran = false;
    std::uint64_t rows = 0, cols = 0;
    std::size_t data_start = 0;
};

FloatHeader float_header(const std::string& b, const std::string& name) {
    const NpyHeader g = parse_npy_header(b, "broken .npy file " + name + ": ");
    FloatHeader h;
    if (g.descr == "<f4")
        h.item = 4;
    else if (g.descr == "<f8")
        h.item = 8;
    else
        broken(name, "unsupported dtype '" + g.descr +
                         "' (attnviz reads little-endian float32 '<f4' or float64 '<f8')");
    if (g.shape.size() != 1 && g.shape.size() != 2)
        broken(name, "expected a 1-D or 2-D array, got " + std::to_string(g.shape.size()) + "-D");
    const std::uint64_t rows = g.shape[0], cols = g.shape.size() == 2 ? g.shape[1] : 1;
    // Each axis at most 2^24: far above the app's 16384 tokens, and a (2e9, 0) array -- no data, but
    // two billion empty rows for every consumer to walk -- is refused (found by tests/fuzz/npy).
    constexpr auto kMaxDim = std::uint64_t(1) << 24;
    if (rows > kMaxDim || cols > kMaxDim)
        broken(name, "array too large (" + std::to_string(rows) + " x " + std::to_string(cols) + ")");
    h.fortran = g.fortran;
    h.rows = rows;
    h.cols = cols;
    h.data_start = g.data_start;
    return h;
}

/// Throws unless exactly the data of `h` follows the header (`have` bytes after data_start).
void check_data_size(const FloatHeader& h, std::uint64_t have, const std::string& name) {
    const std::uint64_t need = h.rows * h.cols * std::uint64_t(h.item);
    if (have < need)
        broken(name, "truncated data (expected " + std::to_string(need) + " bytes for shape " +
                         std::to_string(h.rows) + " x " + std::to_string(h.cols) + ", found " +
                         std::to_string(have) + ")");
    if (have > need) broken(name, std::to_string(have - need) + " unexpected bytes after the data");
}

/// Value k of the data (C or Fortran order as stored), little-endian, as float.
float npy_value(const char* data, std::uint64_t k, int item) {
    if (item == 4) {
        std::uint32_t bits = 0;
        for (int t = 3; t >= 0; --t) bits = (bits << 8) | std::uint8_t(data[k * 4 + std::uint64_t(t)]);
        float v;
        std::memcpy(&v, &bits, 4);
        return v;
    }
    std::uint64_t bits = 0;
    for (int t = 7; t >= 0; --t) bits = (bits << 8) | std::uint8_t(data[k * 8 + std::uint64_t(t)]);
    double d;
    std::memcpy(&d, &bits, 8);
    return float(d);
}

}  // namespace

Mat parse_npy(const std::string& b, const std::string& name) {
    const FloatHeader h = float_header(b, name);
    check_data_size(h, b.size() - h.data_start, name);
    const std::uint64_t rows = h.rows, cols = h.cols;
    const bool fortran = h.fortran;
    Mat M(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));  // rows x cols
    const char* data = b.data() + h.data_start;
    for (std::uint64_t k = 0; k < rows * cols; ++k) {
        // C order: k = i*cols + j. Fortran order: k = j*rows + i.
        const std::uint64_t i = fortran ? k % rows : k / cols;
        const std::uint64_t j = fortran ? k / rows : k % cols;
        M(Eigen::Index(i), Eigen::Index(j)) = npy_value(data, k, h.item);
    }
    return M;
}

Mat read_npy(const std::string& path) {
    // The largest array the app handles is a 16384² mask or stage; 2 GiB covers it as float64.
    return parse_npy(read_file(path, kMaxNpyFileBytes), path);
}

std::string csv_text(const Mat& M) {
    std::string out;
    char buf[64];
    for (Eigen::Index i = 0; i < M.rows(); ++i) {
        for (Eigen::Index j = 0; j < M.cols(); ++j) {
            if (j > 0) out += ',';
            // Shortest text that reads back as the same float; -inf prints as "-inf", NaN as "nan".
            auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), M(i, j));
            (void)ec;
            out.append(buf, end);
        }
        out += '\n';
    }
    return out;
}

void write_csv(const std::string& path, const Mat& M) {
    write_file_atomic(path, csv_text(M));
}

std::string csv_field(const std::string& text) {
    const bool quote = text.find_first_of(",\"\r\n") != std::string::npos ||
                       (!text.empty() && (text.front() == ' ' || text.back() == ' ' || text.front() == '\t'));
    if (!quote) return text;
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string csv_text_labelled(const Mat& M, const Axis& rows, const Axis& cols) {
    std::string out = csv_field(rows.name + " \\ " + cols.name);
    for (Eigen::Index j = 0; j < M.cols(); ++j) out += "," + csv_field(cols.label(int(j)));
    out += '\n';
    char buf[64];
    for (Eigen::Index i = 0; i < M.rows(); ++i) {
        out += csv_field(rows.label(int(i)));
        for (Eigen::Index j = 0; j < M.cols(); ++j) {
            out += ',';
            auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), M(i, j));
            (void)ec;
            out.append(buf, end);
        }
        out += '\n';
    }
    return out;
}

void write_csv_labelled(const std::string& path, const Mat& M, const Axis& rows, const Axis& cols) {
    write_file_atomic(path, csv_text_labelled(M, rows, cols));
}

MaskGrid read_mask_npy(const std::string& path) {
    // Streamed: the header first (sizes checked before any data is read), then the values a block at
    // a time straight into the grid, so a 16384² float64 mask costs its 256 MiB grid, not 2 GiB of
    // file plus a 1 GiB float matrix.
    platform::ReadFile file = platform::ReadFile::open(path);
    const std::uint64_t size = file.size();
    // Reads exactly `count` bytes at the current position, or as many as the file still has.
    auto read_some = [&](std::string& out, std::size_t count) {
        out.resize(count);
        std::size_t got = 0;
        while (got < count) {
            const std::size_t r = file.read(out.data() + got, count - got);
            if (r == 0) break;
            got += r;
        }
        out.resize(got);
    };
    std::string head;
    read_some(head, 12);
    const std::size_t prefix = npy_prefix_size(head, "broken .npy file " + path + ": ");
    if (prefix > kMaxNpyHeaderBytes)
        broken(path, "header of " + std::to_string(prefix) + " bytes (numpy writes a few hundred)");
    std::string rest;
    read_some(rest, prefix > head.size() ? prefix - head.size() : 0);
    head += rest;
    if (head.size() > prefix) head.resize(prefix);  // 12 bytes read, the header is shorter
    const FloatHeader h = float_header(head, path);
    if (h.rows < 1 || h.cols < 1) throw Error("mask " + path + " is empty");
    if (h.rows > 16384 || h.cols > 16384)
        throw Error("mask " + path + " is " + std::to_string(h.rows) + "×" + std::to_string(h.cols) +
                    "; at most 16384×16384 (queries × keys)");
    check_data_size(h, size >= h.data_start ? size - h.data_start : 0, path);
    file.seek(h.data_start);

    MaskGrid grid;
    grid.rows = int(h.rows);
    grid.cols = int(h.cols);
    grid.blocked.assign(std::size_t(grid.rows) * std::size_t(grid.cols), 0);  // rows x cols
    const std::uint64_t total = h.rows * h.cols;
    const std::uint64_t per_block = (std::uint64_t(1) << 20) / std::uint64_t(h.item);  // values per read
    std::string block;
    for (std::uint64_t k0 = 0; k0 < total; k0 += per_block) {
        const std::uint64_t count = std::min(per_block, total - k0);
        read_some(block, std::size_t(count) * std::size_t(h.item));
        if (block.size() != count * std::uint64_t(h.item))
            broken(path, "truncated data (the file shrank while it was read)");
        for (std::uint64_t t = 0; t < count; ++t) {
            const std::uint64_t k = k0 + t;
            // C order: k = i*cols + j. Fortran order: k = j*rows + i.
            const std::uint64_t i = h.fortran ? k % h.rows : k / h.cols;
            const std::uint64_t j = h.fortran ? k / h.rows : k % h.cols;
            const float v = npy_value(block.data(), t, h.item);
            if (std::isnan(v))
                throw Error("mask " + path + " has NaN at (" + std::to_string(i) + ", " + std::to_string(j) +
                            "); use 0 for visible and 1 for hidden");
            grid.blocked[std::size_t(i * h.cols + j)] = v != 0.0f ? 1 : 0;
        }
    }
    return grid;
}

}  // namespace attnviz
