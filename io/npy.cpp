#include "io/npy.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"

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
std::size_t find_key(const std::string& header, const std::string& key, const std::string& name) {
    for (const char q : {'\'', '"'}) {
        const std::string pattern = std::string(1, q) + key + std::string(1, q);
        auto pos = header.find(pattern);
        if (pos == std::string::npos) continue;
        pos += pattern.size();
        while (pos < header.size() && header[pos] == ' ') ++pos;
        if (pos >= header.size() || header[pos] != ':')
            broken(name, "bad header (no ':' after '" + key + "')");
        ++pos;
        while (pos < header.size() && header[pos] == ' ') ++pos;
        return pos;
    }
    broken(name, "bad header (no '" + key + "' entry)");
}

}  // namespace

std::string npy_bytes(const Mat& M) {
    const auto rows = std::size_t(M.rows()), cols = std::size_t(M.cols());
    // Byte for byte what numpy 1.24 writes for np.save(f, a.astype('<f4')) of a 2-D C-order array.
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                         std::to_string(cols) + "), }";
    const std::string first = std::to_string(rows);
    if (first.size() < kGrowthDigits) header.append(kGrowthDigits - first.size(), ' ');
    const std::size_t hlen = header.size() + 1;  // + '\n'
    const std::size_t padlen = kAlign - ((kMagicLen + 2 + 2 + hlen) % kAlign);
    header.append(padlen, ' ');
    header += '\n';

    std::string out;
    out.reserve(10 + header.size() + rows * cols * 4);
    out.append(kMagic, kMagicLen);
    out += char(1);  // format version 1.0
    out += char(0);
    put_u16le(out, std::uint16_t(header.size()));
    out += header;
    // Row-major Mat is C order already; write each float's bits little-endian explicitly so the
    // file is right on any host.
    for (std::size_t i = 0; i < rows; ++i) {
        for (std::size_t j = 0; j < cols; ++j) {
            std::uint32_t bits;
            const float v = M(Eigen::Index(i), Eigen::Index(j));
            std::memcpy(&bits, &v, 4);
            for (int k = 0; k < 4; ++k) out += char((bits >> (8 * k)) & 0xff);
        }
    }
    return out;
}

void write_npy(const std::string& path, const Mat& M) {
    write_file_atomic(path, npy_bytes(M));
}

Mat parse_npy(const std::string& b, const std::string& name) {
    if (b.size() < kMagicLen || b.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
        broken(name, "bad magic (not a NumPy .npy file)");
    if (b.size() < kMagicLen + 4) broken(name, "truncated header");
    const int major = std::uint8_t(b[6]);
    std::size_t header_len = 0, header_start = 0;
    if (major == 1) {
        header_len = get_le(b, 8, 2);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) broken(name, "truncated header");
        header_len = get_le(b, 8, 4);
        header_start = 12;
    } else {
        broken(name, "unsupported format version " + std::to_string(major) + "." +
                         std::to_string(int(std::uint8_t(b[7]))));
    }
    if (b.size() - header_start < header_len) broken(name, "truncated header");
    const std::string header = b.substr(header_start, header_len);
    if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
        broken(name, "bad header (no dictionary)");

    // descr
    std::size_t p = find_key(header, "descr", name);
    if (p >= header.size() || (header[p] != '\'' && header[p] != '"'))
        broken(name, "bad header (descr is not a string)");
    const char quote = header[p];
    const auto descr_end = header.find(quote, p + 1);
    if (descr_end == std::string::npos) broken(name, "bad header (unterminated descr)");
    const std::string descr = header.substr(p + 1, descr_end - p - 1);
    int item = 0;
    if (descr == "<f4")
        item = 4;
    else if (descr == "<f8")
        item = 8;
    else
        broken(name, "unsupported dtype '" + descr +
                         "' (attnviz reads little-endian float32 '<f4' or float64 '<f8')");

    // fortran_order
    p = find_key(header, "fortran_order", name);
    bool fortran = false;
    if (header.compare(p, 4, "True") == 0)
        fortran = true;
    else if (header.compare(p, 5, "False") == 0)
        fortran = false;
    else
        broken(name, "bad header (fortran_order is neither True nor False)");

    // shape: a tuple of non-negative integers
    p = find_key(header, "shape", name);
    if (p >= header.size() || header[p] != '(') broken(name, "bad header (shape is not a tuple)");
    const auto close = header.find(')', p);
    if (close == std::string::npos) broken(name, "bad header (unterminated shape)");
    std::vector<std::uint64_t> shape;
    std::size_t q = p + 1;
    while (q < close) {
        while (q < close && (header[q] == ' ' || header[q] == ',')) ++q;
        if (q >= close) break;
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(header.data() + q, header.data() + close, v);
        if (ec != std::errc() || end == header.data() + q)
            broken(name, "bad header (shape is not a tuple of sizes)");
        shape.push_back(v);
        q = std::size_t(end - header.data());
        while (q < close && header[q] == 'L') ++q;  // Python 2 longs
    }
    if (shape.size() != 1 && shape.size() != 2)
        broken(name, "expected a 1-D or 2-D array, got " + std::to_string(shape.size()) + "-D");
    const std::uint64_t rows = shape[0], cols = shape.size() == 2 ? shape[1] : 1;
    constexpr auto kMaxDim = std::uint64_t(std::numeric_limits<int>::max());
    if (rows > kMaxDim || cols > kMaxDim || (cols != 0 && rows > (std::uint64_t(1) << 40) / cols))
        broken(name, "array too large (" + std::to_string(rows) + " x " + std::to_string(cols) + ")");

    const std::size_t data_start = header_start + header_len;
    const std::uint64_t need = rows * cols * std::uint64_t(item);
    const std::uint64_t have = b.size() - data_start;
    if (have < need)
        broken(name, "truncated data (expected " + std::to_string(need) + " bytes for shape " +
                         std::to_string(rows) + " x " + std::to_string(cols) + ", found " +
                         std::to_string(have) + ")");
    if (have > need) broken(name, std::to_string(have - need) + " unexpected bytes after the data");

    Mat M(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));  // rows x cols
    const char* data = b.data() + data_start;
    for (std::uint64_t k = 0; k < rows * cols; ++k) {
        // C order: k = i*cols + j. Fortran order: k = j*rows + i.
        const std::uint64_t i = fortran ? k % rows : k / cols;
        const std::uint64_t j = fortran ? k / rows : k % cols;
        float v;
        if (item == 4) {
            std::uint32_t bits = 0;
            for (int t = 3; t >= 0; --t) bits = (bits << 8) | std::uint8_t(data[k * 4 + std::uint64_t(t)]);
            std::memcpy(&v, &bits, 4);
        } else {
            std::uint64_t bits = 0;
            for (int t = 7; t >= 0; --t) bits = (bits << 8) | std::uint8_t(data[k * 8 + std::uint64_t(t)]);
            double d;
            std::memcpy(&d, &bits, 8);
            v = float(d);
        }
        M(Eigen::Index(i), Eigen::Index(j)) = v;
    }
    return M;
}

Mat read_npy(const std::string& path) {
    return parse_npy(read_file(path), path);
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

MaskGrid read_mask_npy(const std::string& path) {
    const std::string bytes = read_file(path);
    const Mat M = parse_npy(bytes, path);  // rows x cols (a 1-D array arrives as one column)
    if (M.rows() < 1 || M.cols() < 1) throw Error("mask " + path + " is empty");
    if (M.rows() > 16384 || M.cols() > 16384)
        throw Error("mask " + path + " is " + std::to_string(M.rows()) + "×" + std::to_string(M.cols()) +
                    "; at most 16384×16384 (queries × keys)");
    MaskGrid grid;
    grid.rows = int(M.rows());
    grid.cols = int(M.cols());
    grid.blocked.assign(std::size_t(grid.rows) * std::size_t(grid.cols), 0);
    for (int i = 0; i < grid.rows; ++i) {
        for (int j = 0; j < grid.cols; ++j) {
            const float v = M(i, j);
            if (std::isnan(v))
                throw Error("mask " + path + " has NaN at (" + std::to_string(i) + ", " + std::to_string(j) +
                            "); use 0 for visible and 1 for hidden");
            grid.blocked[std::size_t(i) * std::size_t(grid.cols) + std::size_t(j)] = v != 0.0f ? 1 : 0;
        }
    }
    return grid;
}

}  // namespace attnviz
