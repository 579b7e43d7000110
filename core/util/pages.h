// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
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

} // namespace probescope
