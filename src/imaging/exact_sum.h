#pragma once
// Sums of doubles whose result does not depend on the order of the additions, nor on
// how they were grouped into partial sums: the stack of a job is the same bit for bit
// whatever the number of ranks and the order in which their shots finish.
//
// The method is binned summation (Demmel and Nguyen, "Fast reproducible floating-point
// summation", 2013), in integers. Bin b holds multiples of 2^(32 b). A value x is cut
// at the fixed bin boundaries into parts p_b = the bits of x (truncated toward zero)
// that fall in bin b, |p_b| < 2^32: each part is an integer and exact. A sum keeps the
// three bins from its top bin T (the bin of the largest |x| it has seen) down, each an
// int64 sum of parts. Integer addition is associative, and the bins kept depend only on
// T, the maximum over every x, so any order and any grouping give the same bins: a
// part in bins T-2..T was kept by every partial sum that saw it (a partial sum's top
// t <= T keeps t-2..t, which covers T-2..t), and one below T-2 is dropped by all.
//
// Accuracy: what is dropped is below 2^(32 (T-2)), and the largest |x| is at least
// 2^(32 T): the sum is within (count) 2^-64 of the largest term, relative, before
// the one rounding to double in value(). Each bin takes 2^31 additions before its
// int64 could overflow (parts < 2^32): far beyond any survey's shot count.
#include <cstdint>

namespace rtm::imaging {

// All-zero bytes are the empty sum (0), so that zeroed memory is a stack of empty sums
// without being written (core/zeroed_array.h). Stored raw in job folders: no padding.
struct ExactSum {
    std::int32_t top = 0;   // bin of bins[0] (when used); bins[k] is bin top - k
    std::int32_t used = 0;  // 0: nothing added yet, the sum is 0 (top and bins are 0)
    std::int64_t bins[3] = {0, 0, 0};

    void add(double x);                 // x finite (the caller checks)
    void add(const ExactSum& other);    // merge a partial sum
    double value() const;               // rounded to double, the same for equal bins
    bool operator==(const ExactSum& o) const {
        return used == o.used && top == o.top && bins[0] == o.bins[0] && bins[1] == o.bins[1] && bins[2] == o.bins[2];
    }
};
static_assert(sizeof(ExactSum) == 32, "ExactSum is stored raw in job folders");

}  // namespace rtm::imaging
