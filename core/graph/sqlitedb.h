// SPDX-License-Identifier: Apache-2.0
#pragma once
// A read-only SQLite connection for the graph readers (internal to core/graph): opened only after the path was
// checked to be a regular file holding an SQLite header, through a `file:` URI with mode=ro&immutable=1 so that
// no -wal / -shm file is ever created or written beside an input, and every failure named with the file.
// The file is hostile input (docs/reliability.md, "Graph files: reader bounds"): the connection is defensive (no
// schema-defined functions, views, triggers or extensions; bounded string, SQL and expression sizes; no memory
// map), and a progress handler interrupts any statement once the reader is cancelled.

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace probescope::graph::detail {

class Statement;

class ReadOnlyDb
{
public:
    /// `errorId` is the diagnostic id of every failure ("graph.db", "graph.trend"). `progress` (may be null): its
    /// isCancelled() interrupts a running statement (the step fails; the caller reports the cancel).
    static Result<std::shared_ptr<ReadOnlyDb>> open(const std::filesystem::path& path, std::string errorId,
                                                    const ProgressSink* progress = nullptr);
    ~ReadOnlyDb();
    ReadOnlyDb(const ReadOnlyDb&) = delete;
    ReadOnlyDb& operator=(const ReadOnlyDb&) = delete;

    bool hasTable(std::string_view table) const;
    bool hasColumn(std::string_view table, std::string_view column) const;
    /// Prepares `sql`; the error names the file and SQLite's message.
    Result<std::unique_ptr<Statement>> prepare(std::string_view sql) const;
    Diagnostic error(std::string message) const;
    const std::filesystem::path& path() const { return m_path; }
    sqlite3* handle() const { return m_db; }

private:
    ReadOnlyDb() = default;
    sqlite3* m_db = nullptr;
    std::filesystem::path m_path;
    std::string m_errorId;
    const ProgressSink* m_progress = nullptr;
};

class Statement
{
public:
    Statement(const ReadOnlyDb& db, sqlite3_stmt* stmt) : m_db(db), m_stmt(stmt) {}
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    /// Steps to the next row: true = a row, false = done; a failure (damaged page) sets error().
    bool next();
    const std::optional<Diagnostic>& error() const { return m_error; }
    bool isNull(int column) const;
    bool isInteger(int column) const;
    std::int64_t integer(int column) const;
    double real(int column) const;
    std::string text(int column) const;
    /// The same text without a copy; valid until the next next() (the scan of a million rows reads most columns so).
    std::string_view view(int column) const;
    std::optional<double> number(int column) const; ///< integer or real; nullopt for NULL / text that is no number
    void bind(int index, std::string_view text);
    void bind(int index, std::int64_t value);
    /// Back to the first row, for binding new values.
    void reset();

private:
    const ReadOnlyDb& m_db;
    sqlite3_stmt* m_stmt = nullptr;
    std::optional<Diagnostic> m_error;
};

/// True when the file starts with "SQLite format 3\0" (what tells a .vis.db from JSON). Only regular files.
bool looksLikeSqlite(const std::filesystem::path& path);

/// The longest text or blob a cell may hold (sqlite3_limit SQLITE_LIMIT_LENGTH): a longer one is an error naming the
/// file, not a string of that size. msprobe's largest cells (input_data of a node with hundreds of parameters) are
/// far below it.
inline constexpr int kMaxCellBytes = 256 << 20;

/**
 * @brief The warning for a `<db>-wal` beside `path` that holds committed frames (docs/graph.md, "WAL content"):
 * the reader opens the main file alone (immutable, nothing written beside it), so changes still in the WAL (a
 * writer killed, TensorBoard's plugin still open) are not shown. nullopt when there is no such WAL.
 */
std::optional<std::string> walWarning(const std::filesystem::path& path);

} // namespace probescope::graph::detail
