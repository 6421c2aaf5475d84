#include "core/gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

#include <Eigen/Core>

// The kernel is compiled for AVX-512 whatever the build's -march (function target attributes) and
// chosen at run time, so the package's baseline x86-64 binary uses it on a CPU that has AVX-512, and
// the sanitizer builds (no -march=native) test it.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define ATTNVIZ_GEMM_AVX512 1
// Every AVX-512 instruction ends up in three functions (blocked_16/32/64 below; the templates are
// inlined into them) in a section of their own, attnviz_avx512: the check of the portable package
// (tests/install) tells that code, run only after the CPU check, from code that would die with SIGILL
// on an older x86-64. (GCC ignores a section attribute on a template.)
// Under clang, the sanitizers' checks of the 60 inlined kernels (AddressSanitizer checks each lane
// of a masked load or store on its own) took clang-14 over 15 minutes to compile this file (6 s
// without them, 12 s with them off here): clang's sanitized builds (the fuzzers, which never train)
// leave these functions uninstrumented. GCC's ASan + UBSan build, the one that runs the unit tests,
// instruments them.
#if defined(__clang__)
#define ATTNVIZ_NO_ASAN __attribute__((no_sanitize("address", "undefined")))
#else
#define ATTNVIZ_NO_ASAN
#endif
#define ATTNVIZ_AVX512 __attribute__((target("avx512f"), always_inline)) ATTNVIZ_NO_ASAN inline
#define ATTNVIZ_AVX512_ENTRY \
    __attribute__((target("avx512f"), section("attnviz_avx512"), noinline)) ATTNVIZ_NO_ASAN
#include <immintrin.h>
#endif

namespace attnviz {

namespace {

#if defined(ATTNVIZ_GEMM_AVX512)

constexpr int KC = 128;    // inner terms per packed panel of B: at most 128 × 64 floats = 32 KiB, L1-sized
constexpr int MC = 144;    // rows of A swept per panel of B (a block of A that stays in L2)
constexpr int NC = 256;    // columns of B packed at a time (a multiple of every panel width: 16, 32, 64)
constexpr int KSUPER = 6;  // KC-term panels of B packed at once: NC × 768 floats = 768 KiB

/// C[0..R, 0..ncols) (+)= A[R, kc] · Bp[kc, 16·NV]. A row-major (AT false: A(i, k) at a[i·lda + k]) or
/// transposed (AT true: at a[k·lda + i]); Bp packed, row k at bp + 16·NV·k, zero past ncols.
/// R·NV accumulators stay in registers: every loop over i and j is unrolled.
template <int R, int NV, bool AT>
ATTNVIZ_AVX512 void kernel(int kc, const float* a, long lda, const float* bp, float* c, long ldc, int ncols,
                           bool add, bool prefetch) {
    constexpr int NR = 16 * NV;
    __m512 acc[R][NV];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
    // Operands beyond L2 (`prefetch`): ask for this tile of C (added to at the end) and, for a
    // row-major A, the next tile's rows of A (the next call's broadcasts) while the FMAs below run.
    // Measured on a Xeon (AVX-512): the viewer's forward shapes 4-15 % faster; the trainer's small,
    // cache-resident products 3-5 % slower with it, so they go without.
    if (prefetch) {
#pragma GCC unroll 16
        for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j)
                _mm_prefetch(reinterpret_cast<const char*>(c + long(i) * ldc + 16 * j), _MM_HINT_T0);
        if constexpr (!AT)
            for (int i = R; i < 2 * R; ++i)
                for (int q = 0; q < kc; q += 16)
                    _mm_prefetch(reinterpret_cast<const char*>(a + long(i) * lda + q), _MM_HINT_T0);
    }
    for (int k = 0; k < kc; ++k) {
        __m512 b[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) b[j] = _mm512_load_ps(bp + NR * k + 16 * j);
#pragma GCC unroll 16
        for (int i = 0; i < R; ++i) {
            const __m512 ai = _mm512_set1_ps(AT ? a[long(k) * lda + i] : a[long(i) * lda + k]);
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(ai, b[j], acc[i][j]);
        }
    }
    __mmask16 mask[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
        const int valid = std::clamp(ncols - 16 * j, 0, 16);
        mask[j] = __mmask16((1u << valid) - 1u);
    }
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
        float* row = c + long(i) * ldc;
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            if (!mask[j]) continue;
            __m512 v = acc[i][j];
            if (add) v = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[j], row + 16 * j), v);
            _mm512_mask_storeu_ps(row + 16 * j, mask[j], v);
        }
    }
}

/// Tile shapes: 6 × 64 (24 accumulators), 12 × 32 (24) and 12 × 16 (12, for 16-wide heads).
template <int NV>
constexpr int rows_per_tile() {
    return NV == 4 ? 6 : 12;
}

template <int NV, bool AT, int R = rows_per_tile<NV>()>
ATTNVIZ_AVX512 void kernel_rows(int rows, int kc, const float* a, long lda, const float* bp, float* c,
                                long ldc, int ncols, bool add, bool prefetch) {
    if constexpr (R > 1) {
        if (rows < R) return kernel_rows<NV, AT, R - 1>(rows, kc, a, lda, bp, c, ldc, ncols, add, prefetch);
    }
    kernel<R, NV, AT>(kc, a, lda, bp, c, ldc, ncols, add, prefetch);
}

/// In place: r[q] lane l becomes r[l] lane q (a 16 × 16 transpose in three shuffle stages).
ATTNVIZ_AVX512 void transpose16(__m512 r[16]) {
    __m512 t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved: 2 × 2 blocks
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 16; i += 4) {  // 4 × 4 blocks within each 128-bit lane
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        r[i + 2] =
            _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
        r[i + 3] =
            _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    }
    // 128-bit lanes: rows i and i + 4 (then i and i + 8) exchange halves
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    }
}

/// Packs B[k0 .. k0+kc, 0 .. N) into panels of NR = 16·NV columns: panel p, row k at
/// out + p·NR·kc + NR·k, zero past column N. A row of a panel is NV masked vector loads (rows of B
/// contiguous) or NV masked gathers (any other column stride, e.g. B = Wᵀ).
template <int NV>
ATTNVIZ_AVX512 void pack_b(GemmOperand B, int k0, int kc, int N, float* out) {
    constexpr int NR = 16 * NV;
    const int panels = (N + NR - 1) / NR;
    const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int p = 0; p < panels; ++p) {
        float* dst = out + long(p) * NR * kc;
        const int j0 = p * NR, w = std::min(NR, N - j0);
        __mmask16 mask[NV];
        for (int j = 0; j < NV; ++j) mask[j] = __mmask16((1u << std::clamp(w - 16 * j, 0, 16)) - 1u);
        if (B.cs == 1) {  // rows of B are contiguous
            for (int k = 0; k < kc; ++k) {
                const float* src = B.p + long(k0 + k) * B.rs + j0;
                for (int j = 0; j < NV; ++j)
                    _mm512_store_ps(dst + NR * k + 16 * j, _mm512_maskz_loadu_ps(mask[j], src + 16 * j));
            }
        } else if (B.rs == 1) {  // B = Wᵀ: column j of B is W's row j, contiguous in k
            // 16 columns × 16 terms at a time: 16 row loads of W, transposed in registers (a
            // gather would touch 16 cache lines per vector of 16)
            for (int j = 0; j < NV; ++j) {
                const int cols = std::clamp(w - 16 * j, 0, 16);
                for (int k = 0; k < kc; k += 16) {
                    const int terms = std::min(16, kc - k);
                    const __mmask16 kmask = __mmask16((1u << terms) - 1u);
                    const float* src = B.p + long(j0 + 16 * j) * B.cs + (k0 + k);
                    __m512 r[16];
#pragma GCC unroll 16
                    for (int l = 0; l < 16; ++l)
                        r[l] = l < cols ? _mm512_maskz_loadu_ps(kmask, src + long(l) * B.cs)
                                        : _mm512_setzero_ps();
                    transpose16(r);
                    for (int q = 0; q < terms; ++q) _mm512_store_ps(dst + NR * (k + q) + 16 * j, r[q]);
                }
            }
        } else {  // B(k, j0 + 16·j + l) at src + k·rs + l·cs (15·cs fits a 32-bit offset: see gemm)
            const __m512i offsets = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(int(B.cs)));
            for (int k = 0; k < kc; ++k) {
                const float* src = B.p + long(k0 + k) * B.rs + long(j0) * B.cs;
                for (int j = 0; j < NV; ++j)
                    _mm512_store_ps(dst + NR * k + 16 * j,
                                    _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask[j], offsets,
                                                             src + 16L * j * B.cs, 4));
            }
        }
    }
}

/// Software prefetch (into L2) of the part of B the next pack_b block reads, spread over the kernel
/// calls that run before it: the weights of a forward stream from memory, and packing them waited on
/// every cache line (a quarter of the logits' time at 128 rows) while the FMA units idled.
/// The region is B's columns j0 .. j0 + nc by inner terms k0 .. k0 + kb: one contiguous segment per
/// column (B = Wᵀ, row stride 1) or per row (column stride 1); other strides are not prefetched.
struct PackPrefetch {
    const char* seg = nullptr;    // the segment being prefetched
    long step = 0;                // bytes between segments
    int seg_lines = 0, line = 0;  // cache lines per segment; the next one in this segment
    long left = 0, per_call = 0;  // lines still to ask for; how many per kernel call

    PackPrefetch() = default;
    PackPrefetch(GemmOperand B, int j0, int nc, int k0, int kb, long calls) {
        int segs = 0, len = 0;
        if (B.rs == 1) {
            seg = reinterpret_cast<const char*>(B.p + long(j0) * B.cs + k0);
            step = B.cs * long(sizeof(float)), segs = nc, len = kb;
        } else if (B.cs == 1) {
            seg = reinterpret_cast<const char*>(B.p + long(k0) * B.rs + j0);
            step = B.rs * long(sizeof(float)), segs = kb, len = nc;
        }
        seg_lines = (len + 15) / 16 + 1;  // a segment need not start on a line
        left = long(std::max(0, segs)) * seg_lines;
        per_call = (left + std::max(1L, calls) - 1) / std::max(1L, calls);
    }
    /// Asks for the next per_call lines (no division: this runs before every kernel call).
    void step_once() {
        for (long e = std::min(left, per_call); e > 0; --e, --left) {
            _mm_prefetch(seg + 64L * line, _MM_HINT_T1);
            if (++line == seg_lines) line = 0, seg += step;
        }
    }
};

/// A 64-byte-aligned scratch buffer per thread, grown as needed (C++17's aligned new: Windows' C
/// library has no std::aligned_alloc).
float* pack_buffer(std::size_t floats) {
    struct Aligned {
        float* p = nullptr;
        std::size_t size = 0;
        ~Aligned() { release(); }
        void release() {
            if (p) ::operator delete(p, std::align_val_t(64));
            p = nullptr;
            size = 0;
        }
    };
    thread_local Aligned buf;
    if (buf.size < floats) {
        buf.release();
        buf.p = static_cast<float*>(::operator new(floats * sizeof(float), std::align_val_t(64)));
        buf.size = floats;
    }
    return buf.p;
}

/// The blocked product with tiles of 16·NV columns (see gemm for the arguments; A's layout decided).
/// Loop order: for each NC columns, B is packed for up to KSUPER·KC inner terms at once (at most
/// 768 KiB, L2-sized); then each block of MC rows runs through all of those terms before the next, so
/// its block of C stays in L2 between the KC-term panels instead of going back to L3 (or memory) after
/// each one. Every element's sum is the same either way: KC terms at a time in k order, each panel's
/// sum added to C in k order (the first written), so the result has the same bits as any other
/// blocking.
/// With `visit` (gemm_blocks), C is a scratch [MC, NC] block handed to visit once complete.
template <int NV>
ATTNVIZ_AVX512 void blocked(int M, int N, int K, GemmOperand A, bool a_trans, GemmOperand B, float* C,
                            long ldc, bool accumulate, Triangle tri, const GemmVisitor* visit) {
    constexpr int NR = 16 * NV, MR = rows_per_tile<NV>();
    const long lda = a_trans ? A.cs : A.rs;
    const int KB = visit ? K : std::min(K, KC * KSUPER);  // inner terms packed at once
    // A or C larger than L2 (2^19 floats = 2 MiB): the kernel prefetches (see kernel)
    const bool prefetch = long(M) * K > (1L << 19) || (!visit && long(M) * N > (1L << 19));
    // B larger than 256 KiB and at most two blocks of rows: the next block's source is prefetched
    // during this block's products. (With more rows, packing is a small part of the time, and the
    // prefetched lines would take L2 from A and C: not faster for BERT's or GPT-2's 512-1024 rows.)
    const bool prefetch_b = long(K) * N > (1L << 16) && M <= 2 * MC;
    float* packed = pack_buffer(std::size_t(NC) * std::size_t(KB) + (visit ? std::size_t(MC) * NC : 0));
    float* scratch = packed + std::size_t(NC) * std::size_t(KB);  // visit: C block [MC, NC]
    // Prefetching, the first block of columns is one panel wide: its source is the only one read
    // without a prefetch, and its products run while the next block's source arrives.
    auto width = [&](int j0) { return std::min(prefetch_b && !visit && j0 == 0 ? NR : NC, N - j0); };
    for (int j0 = 0; j0 < N; j0 += width(j0)) {
        const int nc = width(j0), panels = (nc + NR - 1) / NR;
        const GemmOperand Bj{B.p + long(j0) * B.cs, B.rs, B.cs};  // columns j0 .. j0 + nc
        for (int kk0 = 0; kk0 < K; kk0 += KB) {
            const int kb = std::min(KB, K - kk0);
            // panel q of KC terms at packed + q·KC·panels·NR (each pack_b block: panels × NR × kc)
            for (int k0 = kk0; k0 < kk0 + kb; k0 += KC)
                pack_b<NV>(Bj, k0, std::min(KC, kk0 + kb - k0), nc, packed + long(k0 - kk0) * panels * NR);
            // the block packed next (the next KB terms of these columns, or the next columns' first)
            PackPrefetch ahead;
            if (prefetch_b) {
                const int nj0 = kk0 + kb < K ? j0 : j0 + nc, nk0 = kk0 + kb < K ? kk0 + kb : 0;
                const long calls = long((M + MR - 1) / MR) * panels * ((kb + KC - 1) / KC);
                if (nj0 < N) ahead = PackPrefetch(B, nj0, width(nj0), nk0, std::min(KB, K - nk0), calls);
            }
            for (int i0 = 0; i0 < M; i0 += MC) {
                const int i1 = std::min(M, i0 + MC);
                for (int k0 = kk0; k0 < kk0 + kb; k0 += KC) {
                    const int kc = std::min(KC, kk0 + kb - k0);
                    const float* pk = packed + long(k0 - kk0) * panels * NR;
                    const bool add = (accumulate && !visit) || k0 > 0;
                    for (int p = 0; p < panels; ++p) {
                        const float* bp = pk + long(p) * NR * kc;
                        const int col = j0 + p * NR, ncols = std::min(NR, N - col);
                        for (int i = i0; i < i1; i += MR) {
                            const int rows = std::min(MR, i1 - i);
                            if (tri == Triangle::LowerC && col > i + rows - 1) continue;  // wholly above
                            // the inner terms this row block needs from the panel: [k0 + lo, k0 + hi)
                            int lo = 0, hi = kc;
                            if (tri == Triangle::LowerA) hi = std::clamp(i + rows - k0, 0, kc);
                            if (tri == Triangle::UpperA) lo = std::clamp(i - k0, 0, kc);
                            const float* a =
                                a_trans ? A.p + long(k0 + lo) * lda + i : A.p + long(i) * lda + (k0 + lo);
                            float* c =
                                visit ? scratch + long(i - i0) * NC + (col - j0) : C + long(i) * ldc + col;
                            const long ldcc = visit ? long(NC) : ldc;
                            // hi <= lo: nothing to add, but a first panel still writes its zeros
                            const int terms = std::max(0, hi - lo);
                            if (prefetch_b) ahead.step_once();
                            if (a_trans)
                                kernel_rows<NV, true>(rows, terms, a, lda, bp + long(NR) * lo, c, ldcc, ncols,
                                                      add, prefetch);
                            else
                                kernel_rows<NV, false>(rows, terms, a, lda, bp + long(NR) * lo, c, ldcc,
                                                       ncols, add, prefetch);
                        }
                    }
                }
                if (visit) (*visit)(i0, i1 - i0, j0, nc, scratch, long(NC));
            }
        }
    }
}

ATTNVIZ_AVX512_ENTRY void blocked_16(int M, int N, int K, GemmOperand A, bool a_trans, GemmOperand B,
                                     float* C, long ldc, bool accumulate, Triangle tri,
                                     const GemmVisitor* visit) {
    blocked<1>(M, N, K, A, a_trans, B, C, ldc, accumulate, tri, visit);
}
ATTNVIZ_AVX512_ENTRY void blocked_32(int M, int N, int K, GemmOperand A, bool a_trans, GemmOperand B,
                                     float* C, long ldc, bool accumulate, Triangle tri,
                                     const GemmVisitor* visit) {
    blocked<2>(M, N, K, A, a_trans, B, C, ldc, accumulate, tri, visit);
}
ATTNVIZ_AVX512_ENTRY void blocked_64(int M, int N, int K, GemmOperand A, bool a_trans, GemmOperand B,
                                     float* C, long ldc, bool accumulate, Triangle tri,
                                     const GemmVisitor* visit) {
    blocked<4>(M, N, K, A, a_trans, B, C, ldc, accumulate, tri, visit);
}

/// Whether this CPU (and its operating system) runs AVX-512F.
bool cpu_has_avx512() {
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") != 0;
    }();
    return has;
}

#endif  // ATTNVIZ_GEMM_AVX512

}  // namespace

bool gemm_own_kernel() {
#if defined(ATTNVIZ_GEMM_AVX512)
    return cpu_has_avx512();
#else
    return false;
#endif
}

namespace {

/// gemm's dispatch: the own kernel with tiles as wide as N needs, else Eigen's product (false).
bool own_product(int M, int N, int K, GemmOperand A, GemmOperand B, float* C, long ldc, bool accumulate,
                 Triangle tri, const GemmVisitor* visit) {
#if defined(ATTNVIZ_GEMM_AVX512)
    // A's addressing: row-major (column stride 1) or transposed (row stride 1); a one-column A is
    // row-major and a one-row A transposed, whatever their other stride says. B: rows copied (column
    // stride 1) or gathered with 32-bit offsets up to 15 column strides.
    const bool a_rowmajor = A.cs == 1 || K == 1, a_trans = !a_rowmajor && (A.rs == 1 || M == 1);
    if (N == 1) B.cs = 1;  // one column: B(k, 0) at p[k·rs]
    const bool b_ok = B.cs == 1 || (B.cs > 0 && B.cs < (1L << 31) / 16);
    if ((a_rowmajor || a_trans) && b_ok && cpu_has_avx512()) {
        if (N <= 16)
            blocked_16(M, N, K, A, a_trans, B, C, ldc, accumulate, tri, visit);
        else if (N <= 32)
            blocked_32(M, N, K, A, a_trans, B, C, ldc, accumulate, tri, visit);
        else
            blocked_64(M, N, K, A, a_trans, B, C, ldc, accumulate, tri, visit);
        return true;
    }
#else
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C, (void)ldc, (void)accumulate, (void)tri, (void)visit;
#endif
    return false;
}

}  // namespace

void gemm(int M, int N, int K, GemmOperand A, GemmOperand B, float* C, long ldc, bool accumulate,
          Triangle tri) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; ++i) std::fill(C + long(i) * ldc, C + long(i) * ldc + N, 0.0f);
        return;
    }
    if (own_product(M, N, K, A, B, C, ldc, accumulate, tri, nullptr)) return;
    // Eigen's whole product: the terms a Triangle skips are zeros in memory
    strided_product(M, N, K, A.p, A.rs, A.cs, B.p, B.rs, B.cs, C, ldc, accumulate);
}

void gemm_blocks(int M, int N, int K, GemmOperand A, GemmOperand B, const GemmVisitor& visit) {
    if (M <= 0 || N <= 0) return;
    if (K > 0 && own_product(M, N, K, A, B, nullptr, 0, false, Triangle::None, &visit)) return;
    // Eigen's product (or zeros) block by block
    constexpr int MC_E = 144, NC_E = 256;
    std::vector<float> block(std::size_t(MC_E) * NC_E);
    for (int j0 = 0; j0 < N; j0 += NC_E)
        for (int i0 = 0; i0 < M; i0 += MC_E) {
            const int rows = std::min(MC_E, M - i0), cols = std::min(NC_E, N - j0);
            if (K > 0)
                strided_product(rows, cols, K, A.p + long(i0) * A.rs, A.rs, A.cs, B.p + long(j0) * B.cs, B.rs,
                                B.cs, block.data(), long(NC_E), false);
            else
                std::fill(block.begin(), block.end(), 0.0f);
            visit(i0, rows, j0, cols, block.data(), long(NC_E));
        }
}

}  // namespace attnviz
