// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__GLIBC__)
#include <climits>
#include <malloc.h>
#endif

namespace probescope {

/**
 * @brief Gives the whole pages inside [begin, end) back to the system; their bytes must never be read again (the
 * block they belong to may still be freed as usual). Returns where the next release can start: the end of the pages
 * released, or `begin` when there was no whole page.
 *
 * For large buffers read once, front to back, and freed together later (the flattened rows of a compare): the pages
 * behind the reader stop counting towards the peak. Elsewhere than on Unix nothing is released.
 */
inline const void* releasePages(const void* begin, const void* end)
{
#if defined(__unix__) || defined(__APPLE__)
    static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const std::uintptr_t from = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1);
    const std::uintptr_t to = reinterpret_cast<std::uintptr_t>(end) & ~(page - 1);
    if (!begin || from >= to)
        return begin;
    if (madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) != 0)
        return begin;
    return reinterpret_cast<const void*>(to);
#else
    (void)end;
    return begin;
#endif
}

/**
 * @brief For a batch process (the CLI): heap memory freed by one stage stays in the process for the next, instead of
 * going back to the system and being faulted in again page by page.
 *
 * glibc by default gives the top of its heaps back once 128 KiB are free there, and raises its threshold for mapping
 * blocks on their own as large blocks are freed; either way the next stage's allocations come back as fresh pages,
 * which cost from ~1.5 to ~12 µs each on the virtual machines measured (docs/compare-performance.md, issue 26). With
 * this, only blocks of 32 MiB and more are mapped on their own (given back when freed, as the large arrays of a
 * document should be); the rest is reused. Measured at 1M entries: 3 % fewer minor faults (32k of 975k), 29 munmap
 * calls instead of 80, the peak 2.91 GB instead of 2.76-2.89 GB (what is kept counts). Not for the desktop app, which
 * should give memory back after a compare.
 */
inline void keepFreedMemory()
{
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

} // namespace probescope
