// SPDX-License-Identifier: Apache-2.0
#include "core/util/ziparchive.h"

#include "core/util/fileio.h"
#include "core/util/outputfile.h"

#include <zip.h>

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace probescope {

namespace {

Diagnostic zipError(std::string id, const std::filesystem::path& zip, std::string message)
{
    return makeError(std::move(id), fileLocation(zip), std::move(message));
}

/// Why a stored name may not be written under a folder: empty when it may.
std::string badEntryName(std::string_view name)
{
    if (name.empty())
        return "an empty name";
    if (name.front() == '/' || name.front() == '\\')
        return "an absolute path";
    if (name.size() >= 2 && name[1] == ':')
        return "a drive letter";
    if (name.size() > 4096)
        return "a name longer than 4096 bytes";
    std::size_t depth = 0;
    std::size_t start = 0;
    const std::size_t end = name.back() == '/' ? name.size() - 1 : name.size();
    while (start <= end) {
        std::size_t slash = name.find('/', start);
        if (slash == std::string_view::npos || slash > end)
            slash = end;
        const std::string_view part = name.substr(start, slash - start);
        if (part.empty() && start < end)
            return "an empty path component";
        if (part == "..")
            return "a '..' component that leaves the folder";
        if (part == ".")
            return "a '.' component";
        if (part.find('\\') != std::string_view::npos)
            return "a backslash (a Windows path separator)";
        for (const char c : part) {
            if (static_cast<unsigned char>(c) < 0x20)
                return "a control character";
        }
        if (++depth > 64)
            return "more than 64 path components";
        start = slash + 1;
        if (slash == end)
            break;
    }
    return {};
}

std::string quotedName(std::string_view name)
{
    std::string out = "'";
    for (const char c : name)
        out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    return out + "'";
}

} // namespace

struct ZipReader::Handle
{
    zip_t* archive = nullptr;
    ~Handle()
    {
        if (archive)
            zip_discard(archive);
    }
};

ZipReader::~ZipReader() = default;

Result<std::shared_ptr<ZipReader>> ZipReader::open(const std::filesystem::path& path, const ZipLimits& limits)
{
    auto fd = openRegularFile(path);
    if (!fd)
        return fd.error();
    int err = 0;
    zip_t* archive = zip_fdopen(*fd, ZIP_CHECKCONS, &err);
    if (!archive) {
        ::close(*fd);
        zip_error_t error;
        zip_error_init_with_code(&error, err);
        std::string message = path.string() + " is not a readable zip archive: " + zip_error_strerror(&error);
        zip_error_fini(&error);
        return zipError("zip.open", path, std::move(message));
    }
    std::shared_ptr<ZipReader> reader(new ZipReader());
    reader->m_handle = std::make_unique<Handle>();
    reader->m_handle->archive = archive; // owns the descriptor from here on
    reader->m_path = path;
    reader->m_limits = limits;

    const zip_int64_t count = zip_get_num_entries(archive, 0);
    if (count < 0)
        return zipError("zip.open", path, path.string() + ": cannot read the zip's central directory");
    if (static_cast<std::uint64_t>(count) > limits.maxEntries)
        return zipError("zip.too-many", path, path.string() + " has " + std::to_string(count) + " entries; at most "
                                                  + std::to_string(limits.maxEntries) + " are read");
    std::uint64_t total = 0;
    std::map<std::string, std::size_t, std::less<>> byName;
    for (zip_int64_t i = 0; i < count; ++i) {
        const auto index = static_cast<zip_uint64_t>(i);
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(archive, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
            return zipError("zip.open", path, path.string() + ": cannot read entry " + std::to_string(i));
        const std::string name = st.name;
        const std::string entryText = path.string() + ": entry " + quotedName(name);
        if (const std::string why = badEntryName(name); !why.empty())
            return zipError("zip.entry-path", path, entryText + " has " + why + "; refused (nothing is extracted)");
        zip_uint8_t opsys = 0;
        zip_uint32_t attributes = 0;
        if (zip_file_get_external_attributes(archive, index, 0, &opsys, &attributes) == 0 && opsys == ZIP_OPSYS_UNIX) {
            const auto mode = static_cast<mode_t>(attributes >> 16);
            if (S_ISLNK(mode))
                return zipError("zip.symlink", path, entryText + " is a symbolic link; refused (nothing is extracted)");
            if ((mode & S_IFMT) != 0 && !S_ISREG(mode) && !S_ISDIR(mode))
                return zipError("zip.symlink", path, entryText + " is not a regular file or folder; refused");
        }
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
            return zipError("zip.encrypted", path, entryText + " is encrypted; refused");
        if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
            return zipError("zip.open", path, entryText + " has no size in the central directory");
        if (st.size > limits.maxEntryBytes)
            return zipError("zip.bomb", path, entryText + " would expand to " + std::to_string(st.size)
                                                  + " bytes; at most " + std::to_string(limits.maxEntryBytes)
                                                  + " per entry are extracted (a zip bomb?)");
        if (st.size > limits.ratioFloorBytes
            && (st.comp_size == 0 || st.size / st.comp_size > limits.maxRatio))
            return zipError("zip.bomb", path, entryText + " would expand " + std::to_string(st.size) + " bytes from "
                                                  + std::to_string(st.comp_size) + ", more than "
                                                  + std::to_string(limits.maxRatio) + " times (a zip bomb?)");
        total += st.size;
        if (total > limits.maxTotalBytes)
            return zipError("zip.bomb", path, entryText + " takes the archive past " + std::to_string(limits.maxTotalBytes)
                                                  + " uncompressed bytes in all (a zip bomb?)");
        ZipEntryInfo info { name, st.size, st.comp_size, index, name.back() == '/' };
        if (const auto it = byName.find(name); it != byName.end()) {
            reader->m_entries[it->second] = std::move(info);
        } else {
            byName.emplace(name, reader->m_entries.size());
            reader->m_entries.push_back(std::move(info));
        }
    }
    return reader;
}

const ZipEntryInfo* ZipReader::find(std::string_view name) const
{
    for (const auto& entry : m_entries) {
        if (entry.name == name)
            return &entry;
    }
    return nullptr;
}

namespace {

/// Reads entry `entry` of `archive` in pieces, handing each to `sink`; at most entry.size bytes.
template<typename Sink>
std::optional<Diagnostic> streamEntry(zip_t* archive, const std::filesystem::path& path, const ZipEntryInfo& entry,
                                      const Sink& sink)
{
    const std::string entryText = path.string() + ": entry " + quotedName(entry.name);
    zip_file_t* file = zip_fopen_index(archive, entry.index, 0);
    if (!file)
        return zipError("zip.read", path, entryText + ": " + zip_strerror(archive));
    std::string buffer(std::size_t { 1 } << 20, '\0');
    std::uint64_t done = 0;
    std::optional<Diagnostic> failure;
    for (;;) {
        const zip_int64_t got = zip_fread(file, buffer.data(), buffer.size());
        if (got < 0) {
            failure = zipError("zip.read", path, entryText + " cannot be read: " + zip_file_strerror(file));
            break;
        }
        if (got == 0)
            break;
        done += static_cast<std::uint64_t>(got);
        if (done > entry.size) {
            failure = zipError("zip.bomb", path, entryText + " inflates past its listed size of "
                                                     + std::to_string(entry.size) + " bytes (a zip bomb?)");
            break;
        }
        if (auto bad = sink(std::string_view(buffer.data(), static_cast<std::size_t>(got)))) {
            failure = std::move(bad);
            break;
        }
    }
    zip_fclose(file);
    if (!failure && done != entry.size)
        failure = zipError("zip.read", path, entryText + " holds " + std::to_string(done) + " bytes, not the listed "
                                                 + std::to_string(entry.size));
    return failure;
}

} // namespace

std::optional<Diagnostic> ZipReader::stream(const ZipEntryInfo& entry,
                                            const std::function<std::optional<Diagnostic>(std::string_view)>& sink) const
{
    return streamEntry(m_handle->archive, m_path, entry, sink);
}

Result<std::string> ZipReader::read(const ZipEntryInfo& entry) const
{
    std::string out;
    out.reserve(static_cast<std::size_t>(entry.size));
    auto failure = stream(entry, [&](std::string_view piece) -> std::optional<Diagnostic> {
        out.append(piece);
        return std::nullopt;
    });
    if (failure)
        return std::move(*failure);
    return out;
}

namespace {

/// Creates `folder` if missing; an existing one must be a real folder (not a symlink to one).
std::optional<std::string> makeRealFolder(const std::filesystem::path& folder)
{
    if (::mkdir(folder.c_str(), 0777) == 0)
        return std::nullopt;
    const int err = errno;
    struct stat st {};
    if (err == EEXIST && ::lstat(folder.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return std::nullopt;
        return folder.string() + " exists and is not a folder";
    }
    return errnoText("cannot create folder", folder, err);
}

} // namespace

Result<std::vector<std::string>> extractZip(const ZipReader& zip, const std::filesystem::path& folder)
{
    const auto& path = zip.path();
    if (auto bad = makeRealFolder(folder))
        return zipError("zip.extract", path, *bad);
    std::vector<std::string> written;
    for (const auto& entry : zip.entries()) {
        // Parent folders one component at a time, each checked to be a real folder.
        std::filesystem::path at = folder;
        const std::string_view name = entry.name;
        std::size_t start = 0;
        for (std::size_t slash = name.find('/'); slash != std::string_view::npos; slash = name.find('/', start)) {
            at /= std::string(name.substr(start, slash - start));
            if (auto bad = makeRealFolder(at))
                return zipError("zip.extract", path, path.string() + ": entry " + quotedName(name) + ": " + *bad);
            start = slash + 1;
        }
        if (entry.isFolder)
            continue;
        const std::filesystem::path target = folder / std::string(name);
        std::string error;
        auto pending = PendingFile::create(target, error);
        if (!pending)
            return zipError("zip.extract", path, path.string() + ": entry " + quotedName(name) + ": " + error);
        auto failure = zip.stream(entry, [&](std::string_view piece) -> std::optional<Diagnostic> {
            if (!pending->write(piece)) {
                // finish() says why (a full disk), naming the output.
                auto bad = pending->finish();
                return zipError("zip.extract", path, path.string() + ": entry " + quotedName(name) + ": "
                                                         + (bad ? bad->message : "cannot write " + target.string()));
            }
            return std::nullopt;
        });
        if (failure)
            return std::move(*failure);
        if (auto bad = pending->finish())
            return zipError("zip.extract", path, path.string() + ": entry " + quotedName(name) + ": " + bad->message);
        if (auto bad = pending->claim(target))
            return zipError("zip.extract", path, path.string() + ": entry " + quotedName(name) + ": " + target.string()
                                                     + (bad->nameTaken ? " already exists (nothing is replaced)"
                                                                       : ": " + bad->message));
        written.emplace_back(name);
    }
    return written;
}

Result<bool> writeZip(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::string>>& entries,
                      ReplaceMode mode)
{
    struct stat st {};
    if (mode == ReplaceMode::Never && ::lstat(path.c_str(), &st) == 0)
        return zipError("zip.write", path, path.string() + " already exists (nothing is replaced)");
    std::string error;
    auto temp = createTempBeside(path, ".zip", error);
    if (!temp)
        return zipError("zip.write", path, error);
    struct Remove
    {
        std::filesystem::path file;
        ~Remove()
        {
            if (!file.empty())
                ::unlink(file.c_str());
        }
    } cleanup { *temp };

    int err = 0;
    zip_t* archive = zip_open(temp->c_str(), ZIP_TRUNCATE, &err);
    if (!archive)
        return zipError("zip.write", path, "cannot start the zip " + path.string());
    // Python's ZipInfo(name) dates an entry 1980-01-01 00:00 local time.
    std::tm date {};
    date.tm_year = 80;
    date.tm_mday = 1;
    date.tm_isdst = -1;
    const std::time_t when = std::mktime(&date);
    for (const auto& [name, content] : entries) {
        if (const std::string why = badEntryName(name); !why.empty()) {
            zip_discard(archive);
            return zipError("zip.write", path, "entry " + quotedName(name) + " has " + why);
        }
        zip_source_t* source = zip_source_buffer(archive, content.data(), content.size(), 0);
        const zip_int64_t index = source ? zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
        if (index < 0) {
            if (source)
                zip_source_free(source);
            const std::string why = zip_strerror(archive);
            zip_discard(archive);
            return zipError("zip.write", path, "cannot add " + quotedName(name) + " to " + path.string() + ": " + why);
        }
        zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 0);
        zip_file_set_mtime(archive, static_cast<zip_uint64_t>(index), when, 0);
        zip_file_set_external_attributes(archive, static_cast<zip_uint64_t>(index), 0, ZIP_OPSYS_UNIX,
                                         static_cast<zip_uint32_t>(S_IFREG | 0600) << 16);
    }
    // libzip writes the file itself: the full-disk seam of the output writers (outputfile.h) is asked here, as a
    // real ENOSPC would make zip_close fail.
    if (injectFullDisk(OutputStep::Write)) {
        zip_discard(archive);
        return zipError("zip.write", path, errnoText("cannot write", path, ENOSPC));
    }
    if (zip_close(archive) != 0) {
        const std::string why = zip_strerror(archive);
        zip_discard(archive);
        return zipError("zip.write", path, "cannot write " + path.string() + ": " + why);
    }
    if (const int fd = ::open(temp->c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
    if (mode == ReplaceMode::Allowed) {
        // The caller's own pack, rewritten with more entries (ConfigChecker's steps): the move replaces it at once.
        if (::rename(temp->c_str(), path.c_str()) != 0)
            return zipError("zip.write", path, errnoText("cannot write", path, errno));
    } else if (auto failure = renameNoReplace(*temp, path)) {
        return zipError("zip.write", path, failure->nameTaken ? path.string() + " already exists (nothing is replaced)"
                                                              : failure->message);
    }
    cleanup.file.clear();
    return true;
}

Result<bool> appendToZip(const std::filesystem::path& path,
                         const std::vector<std::pair<std::string, std::string>>& entries, const ZipLimits& limits)
{
    // Every process of a job (a rank) adds its entries to the one pack, as msprobe's create_file_in_zip does under
    // flock. The lock is on the folder: the zip itself is replaced by each rewrite, so a lock on it would not
    // exclude a process that opened the new file.
    const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const int lockFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lockFd < 0)
        return zipError("zip.write", path, errnoText("cannot open the folder of", path, errno));
    struct Unlock
    {
        int fd;
        ~Unlock()
        {
            ::flock(fd, LOCK_UN);
            ::close(fd);
        }
    } unlock { lockFd };
    while (::flock(lockFd, LOCK_EX) != 0) {
        if (errno != EINTR)
            return zipError("zip.write", path, errnoText("cannot lock the folder of", path, errno));
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0)
        return writeZip(path, entries, ReplaceMode::Never);
    if (!S_ISREG(st.st_mode))
        return zipError("zip.write", path, path.string() + " is not a regular file (nothing is replaced)");
    auto existing = ZipReader::open(path, limits);
    if (!existing)
        return existing.error();
    std::vector<std::pair<std::string, std::string>> all;
    all.reserve((*existing)->entries().size() + entries.size());
    for (const auto& entry : (*existing)->entries()) {
        for (const auto& [name, content] : entries) {
            if (name == entry.name)
                return zipError("zip.write", path, path.string() + " already holds the entry " + quotedName(name)
                                                       + " (a pack of another run?); nothing is replaced");
        }
        auto content = (*existing)->read(entry);
        if (!content)
            return content.error();
        all.emplace_back(entry.name, std::move(*content));
    }
    all.insert(all.end(), entries.begin(), entries.end());
    return writeZip(path, all, ReplaceMode::Allowed);
}

} // namespace probescope
