// SPDX-License-Identifier: Apache-2.0
// The zip subset of torch.save archives, after PKWARE's APPNOTE (local headers, central directory, zip64 end
// records): only what torch.save writes (STORED records under one folder).
#include "core/tensor/ptformat.h"

#include <algorithm>
#include <unordered_set>

namespace probescope::tensor::pt {


/// ASCII-only lower case, as LibTorch's case-insensitive zip lookup folds names (locale-independent).
std::string foldCase(std::string_view name)
{
    std::string out(name);
    for (char& c : out)
        c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    return out;
}

namespace {

/// Whether two names are equal once folded as foldCase folds them (no copy).
bool sameFolded(std::string_view a, std::string_view b)
{
    const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (fold(a[i]) != fold(b[i]))
            return false;
    }
    return true;
}

} // namespace

/// Reads the central directory and every local header; refuses anything torch.save would not write.
Outcome<std::vector<ZipRecord>> readZip(const Source& source)
{
    const std::uint64_t size = source.size();
    constexpr std::size_t kEndSize = 22;
    if (size < kEndSize)
        return corrupt("the zip archive is shorter than its end record");

    // The end record sits at the very end unless an archive comment follows it.
    std::string tailScratch;
    std::string_view tail;
    const std::size_t tailSize = static_cast<std::size_t>(std::min<std::uint64_t>(size, kEndSize + 0xFFFF));
    const std::uint64_t tailStart = size - tailSize;
    if (!source.view(tailStart, tailSize, tailScratch, tail))
        return corrupt("the file could not be read to its end");
    std::optional<std::size_t> endPos;
    for (std::size_t p = tailSize - kEndSize + 1; p-- > 0;) {
        if (std::memcmp(tail.data() + p, "PK\x05\x06", 4) == 0) {
            if (p + kEndSize + le16(tail.data() + p + 20) == tailSize)
                endPos = p;
            break;
        }
    }
    if (!endPos)
        return corrupt("no zip end-of-central-directory record (truncated file?)");
    const char* end = tail.data() + *endPos;
    std::uint64_t entries = le16(end + 10);
    std::uint64_t cdSize = le32(end + 12);
    std::uint64_t cdOffset = le32(end + 16);
    if (le16(end + 4) != 0 || le16(end + 6) != 0 || le16(end + 8) != le16(end + 10))
        return corrupt("multi-disk zip archives are not written by torch.save");

    // torch's writer always adds the zip64 end record and its locator; when present they rule.
    const std::uint64_t endOffset = tailStart + *endPos;
    if (*endPos >= 20 && std::memcmp(end - 20, "PK\x06\x07", 4) == 0) {
        const char* locator = end - 20;
        const std::uint64_t zip64Offset = le64(locator + 8);
        if (le32(locator + 4) != 0 || le32(locator + 16) != 1)
            return corrupt("multi-disk zip64 archives are not written by torch.save");
        constexpr std::size_t kZip64EndSize = 56;
        if (!fits(zip64Offset, kZip64EndSize, endOffset - 20))
            return corrupt("the zip64 end record lies outside the file");
        std::string scratch;
        std::string_view record;
        if (!source.view(zip64Offset, kZip64EndSize, scratch, record))
            return corrupt("the zip64 end record could not be read");
        if (std::memcmp(record.data(), "PK\x06\x06", 4) != 0)
            return corrupt("the zip64 locator does not point at a zip64 end record");
        if (le32(record.data() + 16) != 0 || le32(record.data() + 20) != 0
            || le64(record.data() + 24) != le64(record.data() + 32))
            return corrupt("multi-disk zip64 archives are not written by torch.save");
        const std::uint64_t entries64 = le64(record.data() + 32);
        const std::uint64_t cdSize64 = le64(record.data() + 40);
        const std::uint64_t cdOffset64 = le64(record.data() + 48);
        // The plain record holds either the same values or the "see zip64" markers.
        if ((entries != 0xFFFF && entries != entries64) || (cdSize != 0xFFFFFFFF && cdSize != cdSize64)
            || (cdOffset != 0xFFFFFFFF && cdOffset != cdOffset64))
            return corrupt("the zip end record and the zip64 end record disagree");
        entries = entries64;
        cdSize = cdSize64;
        cdOffset = cdOffset64;
    } else if (entries == 0xFFFF || cdSize == 0xFFFFFFFF || cdOffset == 0xFFFFFFFF) {
        return corrupt("the zip end record refers to a zip64 record that is missing");
    }

    constexpr std::size_t kCentralSize = 46;
    if (entries == 0)
        return corrupt("the zip archive holds no records");
    if (!fits(cdOffset, cdSize, endOffset) || cdSize / kCentralSize < entries)
        return corrupt("the zip central directory lies outside the file", endOffset);

    std::string cdScratch;
    std::string_view cd;
    if (!source.view(cdOffset, static_cast<std::size_t>(cdSize), cdScratch, cd))
        return corrupt("the zip central directory could not be read");

    std::vector<ZipRecord> records;
    records.reserve(static_cast<std::size_t>(entries));
    std::size_t pos = 0;
    std::string localScratch;
    constexpr std::uint64_t kCompareInPlace = 16;
    std::unordered_set<std::string> foldedNames;
    if (entries > kCompareInPlace)
        foldedNames.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(entries, 1u << 20)));
    for (std::uint64_t i = 0; i < entries; ++i) {
        const std::uint64_t where = cdOffset + pos;
        if (cd.size() - pos < kCentralSize || std::memcmp(cd.data() + pos, "PK\x01\x02", 4) != 0)
            return corrupt("damaged zip central directory entry", where);
        const char* e = cd.data() + pos;
        const std::uint16_t flags = le16(e + 8);
        const std::uint16_t method = le16(e + 10);
        std::uint64_t compressed = le32(e + 20);
        std::uint64_t uncompressed = le32(e + 24);
        const std::size_t nameLength = le16(e + 28);
        const std::size_t extraLength = le16(e + 30);
        const std::size_t commentLength = le16(e + 32);
        const std::uint16_t disk = le16(e + 34);
        const std::uint32_t externalAttributes = le32(e + 38);
        std::uint64_t localOffset = le32(e + 42);
        if (cd.size() - pos - kCentralSize < nameLength + extraLength + commentLength)
            return corrupt("damaged zip central directory entry", where);
        const std::string_view name(e + kCentralSize, nameLength);
        if ((flags & ~0x0808u) != 0) // only "sizes in a data descriptor" and "UTF-8 names"
            return corrupt("zip record " + std::string(name) + " is encrypted or uses unsupported options", where);
        if (method != 0)
            return corrupt("zip record " + std::string(name)
                               + " is compressed; torch.save stores records uncompressed",
                           where);

        // Zip64 extra field: the 64-bit values, in this order, of the fields set to 0xFFFFFFFF.
        std::string_view extra(e + kCentralSize + nameLength, extraLength);
        bool sawZip64 = false;
        while (!extra.empty()) {
            if (extra.size() < 4)
                return corrupt("damaged extra field in zip record " + std::string(name), where);
            const std::uint16_t id = le16(extra.data());
            const std::size_t length = le16(extra.data() + 2);
            if (extra.size() - 4 < length)
                return corrupt("damaged extra field in zip record " + std::string(name), where);
            if (id == 0x0001) {
                if (sawZip64)
                    return corrupt("two zip64 fields in zip record " + std::string(name), where);
                sawZip64 = true;
                std::string_view values = extra.substr(4, length);
                for (std::uint64_t* field : { &uncompressed, &compressed, &localOffset }) {
                    if (*field != 0xFFFFFFFF)
                        continue;
                    if (values.size() < 8)
                        return corrupt("short zip64 field in zip record " + std::string(name), where);
                    *field = le64(values.data());
                    values.remove_prefix(8);
                }
            }
            extra.remove_prefix(4 + length);
        }
        if (uncompressed == 0xFFFFFFFF || compressed == 0xFFFFFFFF || localOffset == 0xFFFFFFFF)
            if (!sawZip64)
                return corrupt("zip record " + std::string(name) + " lacks its zip64 sizes", where);
        if (compressed != uncompressed)
            return corrupt("stored zip record " + std::string(name) + " has differing sizes", where);
        if (disk != 0 && disk != 0xFFFF)
            return corrupt("multi-disk zip archives are not written by torch.save", where);
        if (nameLength == 0 || name.find('\0') != std::string_view::npos)
            return corrupt("a zip record has an empty or invalid name", where);
        // LibTorch's zip reader hands back no bytes for a folder record, whatever its sizes say.
        if (name.ends_with('/') || (externalAttributes & 0x10) != 0)
            return corrupt("zip record " + std::string(name) + " is marked as a folder", where);

        // The local header repeats the name; its extra field (torch's alignment padding) may differ.
        constexpr std::size_t kLocalSize = 30;
        if (!fits(localOffset, kLocalSize + nameLength, cdOffset))
            return corrupt("zip record " + std::string(name) + " points outside the file", where);
        std::string_view local;
        if (!source.view(localOffset, kLocalSize + nameLength, localScratch, local))
            return corrupt("zip record " + std::string(name) + " could not be read", localOffset);
        if (std::memcmp(local.data(), "PK\x03\x04", 4) != 0 || le16(local.data() + 8) != 0
            || le16(local.data() + 26) != nameLength || local.substr(kLocalSize) != name)
            return corrupt("the local header of zip record " + std::string(name) + " does not match the directory",
                           localOffset);
        const std::uint64_t dataOffset = localOffset + kLocalSize + nameLength + le16(local.data() + 28);
        if (!fits(dataOffset, uncompressed, cdOffset))
            return corrupt("zip record " + std::string(name) + " reaches past its archive", localOffset);

        // LibTorch's zip lookup ignores case, so such twins could be read either way. A hash set keeps the
        // check linear: comparing with every earlier record took minutes for 65,000 records (issue 20). A
        // single tensor has 3-5 records: comparing them in place costs no allocation (the same verdict).
        const bool twin = entries <= kCompareInPlace
            ? std::any_of(records.begin(), records.end(), [name](const ZipRecord& r) { return sameFolded(r.name, name); })
            : !foldedNames.insert(foldCase(name)).second;
        if (twin)
            return corrupt("zip record " + std::string(name) + " appears twice", where);
        records.push_back({ std::string(name), dataOffset, uncompressed });
        pos += kCentralSize + nameLength + extraLength + commentLength;
    }
    return records;
}

} // namespace probescope::tensor::pt
