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

Result<std::shared_ptr<ReadOnlyDb>> ReadOnlyDb::open(const std::filesystem::path& path, std::string errorId)
{
    const SourceLocation where { path.string(), std::nullopt, 0, 0 };
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
    return makeError(m_errorId, SourceLocation { m_path.string(), std::nullopt, 0, 0 }, std::move(message));
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
