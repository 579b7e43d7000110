// SPDX-License-Identifier: Apache-2.0
#include "core/graph/sqlitewriter.h"

#include "core/util/outputfile.h"

#include <sqlite3.h>

#include <cerrno>
#include <system_error>

namespace probescope::graph::detail {

namespace fs = std::filesystem;

WritableDb::~WritableDb()
{
    if (m_db)
        sqlite3_close_v2(m_db);
}

std::optional<std::string> WritableDb::open()
{
    if (sqlite3_open_v2(m_path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
        return failure("cannot open");
    return std::nullopt;
}

std::optional<std::string> WritableDb::exec(const std::string& sql)
{
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : "unknown error";
        sqlite3_free(message);
        return text;
    }
    return std::nullopt;
}

std::optional<std::string> WritableDb::close()
{
    if (m_db && sqlite3_close(m_db) != SQLITE_OK)
        return failure("cannot close");
    m_db = nullptr;
    return std::nullopt;
}

std::string WritableDb::failure(const char* what)
{
    return std::string(what) + ": " + (m_db ? sqlite3_errmsg(m_db) : "out of memory");
}

Insert::Insert(sqlite3* db, const std::string& sql)
{
    sqlite3_prepare_v2(db, sql.c_str(), -1, &m_stmt, nullptr);
}

Insert::~Insert()
{
    sqlite3_finalize(m_stmt);
}

void Insert::text(int i, const std::string& s)
{
    sqlite3_bind_text(m_stmt, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

void Insert::integer(int i, std::int64_t v)
{
    sqlite3_bind_int64(m_stmt, i, v);
}

void Insert::real(int i, double v)
{
    sqlite3_bind_double(m_stmt, i, v);
}

void Insert::null(int i)
{
    sqlite3_bind_null(m_stmt, i);
}

bool Insert::run()
{
    const int rc = sqlite3_step(m_stmt);
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
    return rc == SQLITE_DONE;
}

bool Insert::row()
{
    return sqlite3_step(m_stmt) == SQLITE_ROW;
}

std::int64_t Insert::columnInteger(int i) const
{
    return sqlite3_column_int64(m_stmt, i);
}

std::string Insert::columnText(int i) const
{
    const auto* text = sqlite3_column_text(m_stmt, i);
    return text ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, i)))
                : std::string();
}

void Insert::reset()
{
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

Result<fs::path> writeNewDb(const fs::path& folder, const std::string& stem, const std::string& extension, DbName name,
                            const std::function<std::optional<std::string>(WritableDb&)>& fill, const std::string& errorId)
{
    const fs::path finalName = folder / (stem + extension);
    const SourceLocation at = fileLocation(finalName);
    std::string error;
    const auto temp = createTempBeside(finalName, ".tmp", error);
    if (!temp)
        return makeError(errorId, at, error);
    std::error_code ec;
    auto removeSidecars = [&] {
        for (const char* tail : { "-journal", "-wal", "-shm" })
            fs::remove(fs::path(temp->string() + tail), ec);
    };
    auto cleanup = [&] {
        fs::remove(*temp, ec);
        removeSidecars();
    };
    {
        WritableDb db(*temp);
        auto fail = [&](const std::string& what) {
            // SQLite's own writes: a full disk (SQLITE_FULL) reads as any other output's full disk.
            const bool full = db.handle()
                && (sqlite3_errcode(db.handle()) == SQLITE_FULL
                    || sqlite3_extended_errcode(db.handle()) == SQLITE_IOERR_WRITE);
            db.close();
            cleanup();
            return makeError(errorId, at, full ? errnoText("cannot write", finalName, ENOSPC) : "cannot write the db: " + what);
        };
        if (auto e = db.open())
            return fail(*e);
        if (auto e = fill(db))
            return fail(*e);
        // The full-disk test seam (docs/reliability.md "Full disk"): SQLite writes on its own, so the finished db is
        // this output's one write step.
        if (injectFullDisk(OutputStep::Write)) {
            db.close();
            cleanup();
            return makeError(errorId, at, errnoText("cannot write", finalName, ENOSPC));
        }
        if (auto e = db.close())
            return fail(*e);
    }
    removeSidecars();
    if (name == DbName::FreeName) {
        if (auto written = claimFreeName(*temp, folder, stem, extension, error))
            return *written;
        cleanup();
        return makeError(errorId, at, error);
    }
    if (const auto failure = renameNoReplace(*temp, finalName)) {
        cleanup();
        return makeError(errorId, at,
                         failure->nameTaken ? "this name is taken: an existing file is never replaced" : failure->message);
    }
    return finalName;
}

} // namespace probescope::graph::detail
