// SPDX-License-Identifier: Apache-2.0
#include "core/graph/sqlitedb.h"

#include "core/util/fileio.h"

#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace probescope::graph::detail {

namespace {

/// A `file:` URI for `path`: every byte outside the unreserved set and '/' is percent-encoded, so '?', '#' and
/// '%' in a folder name can never be taken as URI syntax.
std::string fileUri(const std::filesystem::path& path)
{
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out = "file:";
    for (const unsigned char c : std::filesystem::absolute(path).string()) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
            || c == '.' || c == '~' || c == '/') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    // immutable=1: SQLite reads the main file only and never creates a -shm or -wal file beside it (msprobe's dbs
    // are in WAL mode; mode=ro alone would still create the -shm of a WAL database in a writable folder).
    out += "?mode=ro&immutable=1";
    return out;
}

} // namespace

bool looksLikeSqlite(const std::filesystem::path& path)
{
    auto fd = openRegularFile(path);
    if (!fd)
        return false;
    std::array<char, 16> header {};
    const ssize_t n = ::read(*fd, header.data(), header.size());
    ::close(*fd);
    return n == 16 && std::memcmp(header.data(), "SQLite format 3", 16) == 0;
}

namespace {

/// Every few thousand virtual-machine steps: a non-zero answer interrupts the statement (a cancelled open).
int onProgress(void* sink)
{
    return static_cast<const ProgressSink*>(sink)->isCancelled() ? 1 : 0;
}

/// The connection settings for an untrusted file (https://www.sqlite.org/security.html): no writes through the
/// schema, no functions or virtual tables run from it, no triggers or views (the readers query tables only), no
/// extensions, no memory map, and bounded sizes.
void harden(sqlite3* db)
{
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxCellBytes);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
    sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 100);
    sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 10);
    sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 100000);
    sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 8);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100);
    sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 16);
    sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
    sqlite3_exec(db, "PRAGMA mmap_size = 0", nullptr, nullptr, nullptr);
}

std::uint32_t bigEndian32(const unsigned char* p)
{
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

} // namespace

std::optional<std::string> walWarning(const std::filesystem::path& path)
{
    // A WAL file (https://www.sqlite.org/fileformat.html#the_write_ahead_log): a 32-byte header (magic, version,
    // page size, checkpoint sequence, two salts, checksum), then frames of a 24-byte header and a page. A frame of
    // the current WAL repeats the header's salts; a commit frame has a non-zero "database size after commit". Only
    // the headers are read (a page-size stride through the file), and nothing is opened but a regular file.
    std::filesystem::path wal = path;
    wal += "-wal";
    auto fd = openRegularFile(wal);
    if (!fd)
        return std::nullopt;
    std::array<unsigned char, 32> header {};
    const bool whole = ::pread(*fd, header.data(), header.size(), 0) == 32;
    const std::uint32_t magic = bigEndian32(header.data());
    const std::uint32_t pageSize = bigEndian32(header.data() + 8);
    bool commits = false;
    if (whole && (magic == 0x377f0682u || magic == 0x377f0683u) && pageSize >= 512 && pageSize <= 65536
        && (pageSize & (pageSize - 1)) == 0) {
        for (off_t at = 32;; at += 24 + static_cast<off_t>(pageSize)) {
            std::array<unsigned char, 24> frame {};
            if (::pread(*fd, frame.data(), frame.size(), at) != 24)
                break;
            if (std::memcmp(frame.data() + 8, header.data() + 16, 8) != 0)
                break; // salts of an earlier WAL: the valid frames end here
            if (bigEndian32(frame.data() + 4) != 0) {
                commits = true; // one is enough to warn: the walk stops there
                break;
            }
        }
    }
    ::close(*fd);
    if (!commits)
        return std::nullopt;
    return wal.string() + " holds committed changes that may not be in the database yet (a writer still has it open, or was stopped); "
          "they are not read: close the writer (or open the db once with sqlite3) and read it again";
}

Result<std::shared_ptr<ReadOnlyDb>> ReadOnlyDb::open(const std::filesystem::path& path, std::string errorId,
                                                     const ProgressSink* progress)
{
    const SourceLocation where = fileLocation(path);
    // The regular-file check first (a FIFO or a folder is refused, never opened by SQLite).
    auto fd = openRegularFile(path);
    if (!fd)
        return fd.error();
    ::close(*fd);
    if (!looksLikeSqlite(path))
        return makeError(errorId, where, "not an SQLite database (the file does not start with \"SQLite format 3\")");
    std::shared_ptr<ReadOnlyDb> db(new ReadOnlyDb());
    db->m_path = path;
    db->m_errorId = std::move(errorId);
    const std::string uri = fileUri(path);
    const int rc = sqlite3_open_v2(uri.c_str(), &db->m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) {
        std::string message = db->m_db ? sqlite3_errmsg(db->m_db) : sqlite3_errstr(rc);
        return makeError(db->m_errorId, where, "cannot open the database: " + message);
    }
    harden(db->m_db);
    db->m_progress = progress;
    if (progress)
        sqlite3_progress_handler(db->m_db, 4096, onProgress, const_cast<ProgressSink*>(progress));
    // A damaged file shows itself on the first read of the schema; check it here so the error is about the file.
    auto probe = db->prepare("SELECT count(*) FROM sqlite_master");
    if (!probe)
        return probe.error();
    (*probe)->next();
    if ((*probe)->error())
        return *(*probe)->error();
    return db;
}

ReadOnlyDb::~ReadOnlyDb()
{
    if (m_db)
        sqlite3_close_v2(m_db);
}

Diagnostic ReadOnlyDb::error(std::string message) const
{
    return makeError(m_errorId, fileLocation(m_path), std::move(message));
}

Result<std::unique_ptr<Statement>> ReadOnlyDb::prepare(std::string_view sql) const
{
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
        if (stmt)
            sqlite3_finalize(stmt);
        return error(std::string("cannot read the database: ") + sqlite3_errmsg(m_db));
    }
    return std::make_unique<Statement>(*this, stmt);
}

bool ReadOnlyDb::hasTable(std::string_view table) const
{
    auto st = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
    if (!st)
        return false;
    (*st)->bind(1, table);
    return (*st)->next();
}

bool ReadOnlyDb::hasColumn(std::string_view table, std::string_view column) const
{
    auto st = prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
    if (!st)
        return false;
    (*st)->bind(1, table);
    (*st)->bind(2, column);
    return (*st)->next();
}

Statement::~Statement()
{
    sqlite3_finalize(m_stmt);
}

bool Statement::next()
{
    if (m_error)
        return false;
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    if (rc == SQLITE_INTERRUPT) {
        // The progress handler saw the cancel (ReadOnlyDb::open's `progress`).
        m_error = makeError("graph.cancelled", fileLocation(m_db.path()),
                            "reading the database was cancelled");
        return false;
    }
    m_error = m_db.error(std::string("cannot read the database (damaged?): ") + sqlite3_errmsg(m_db.handle()));
    return false;
}

bool Statement::isNull(int column) const
{
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

bool Statement::isInteger(int column) const
{
    return sqlite3_column_type(m_stmt, column) == SQLITE_INTEGER;
}

std::int64_t Statement::integer(int column) const
{
    return sqlite3_column_int64(m_stmt, column);
}

double Statement::real(int column) const
{
    return sqlite3_column_double(m_stmt, column);
}

std::string Statement::text(int column) const
{
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    if (!p)
        return {};
    return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
}

std::string_view Statement::view(int column) const
{
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    if (!p)
        return {};
    return std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
}

std::optional<double> Statement::number(int column) const
{
    switch (sqlite3_column_type(m_stmt, column)) {
    case SQLITE_INTEGER: return static_cast<double>(sqlite3_column_int64(m_stmt, column));
    case SQLITE_FLOAT: return sqlite3_column_double(m_stmt, column);
    default: return std::nullopt;
    }
}

void Statement::bind(int index, std::string_view text)
{
    sqlite3_bind_text(m_stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

void Statement::bind(int index, std::int64_t value)
{
    sqlite3_bind_int64(m_stmt, index, value);
}

void Statement::reset()
{
    sqlite3_reset(m_stmt);
    m_error.reset();
}

} // namespace probescope::graph::detail
