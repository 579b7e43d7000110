// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writing a new SQLite db (.vis.db, .trend.db): the one mechanism of every db ProbeScope writes. The db is built in a
// fresh temporary file beside its name and claimed with the no-replace rename (core/util/outputfile.h), so a reader
// never sees half a db and an existing file is never replaced.

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace probescope::graph::detail {

/// A read-write connection to the temporary db being built.
class WritableDb
{
public:
    explicit WritableDb(std::filesystem::path path) : m_path(std::move(path)) {}
    ~WritableDb();
    WritableDb(const WritableDb&) = delete;
    WritableDb& operator=(const WritableDb&) = delete;

    std::optional<std::string> open();
    /// Runs SQL text (several statements); SQLite's message on failure.
    std::optional<std::string> exec(const std::string& sql);
    sqlite3* handle() { return m_db; }
    std::optional<std::string> close();

private:
    std::string failure(const char* what);
    std::filesystem::path m_path;
    sqlite3* m_db = nullptr;
};

/// A prepared statement with positional binds (1-based), run once per row.
class Insert
{
public:
    Insert(sqlite3* db, const std::string& sql);
    ~Insert();
    Insert(const Insert&) = delete;
    Insert& operator=(const Insert&) = delete;
    bool valid() const { return m_stmt != nullptr; }
    void text(int i, const std::string& s);
    void integer(int i, std::int64_t v);
    void real(int i, double v);
    void null(int i);
    /// Steps once and resets the binds; false on an error.
    bool run();
    /// Steps a SELECT: true while there is a row.
    bool row();
    std::int64_t columnInteger(int i) const;
    std::string columnText(int i) const;
    void reset();

private:
    sqlite3_stmt* m_stmt = nullptr;
};

/// Under which name writeNewDb claims its db.
enum class DbName : std::uint8_t {
    Exact,   ///< folder/stem+extension or nothing: a taken name is an error
    FreeName ///< the first free name of stem+extension, stem_1+extension, ... (util/outputfile's claimFreeName)
};

/**
 * @brief Builds a new db with `fill` in a fresh temporary file beside `folder/stem+extension` and claims it as `name`
 * says, never replacing a file (a symlink at a name is taken). Nothing is left behind on failure (no temporary file,
 * -journal, -wal or -shm). Every error (id `errorId`) names the db's final name, never the temporary one; SQLite's
 * own full-disk failures and the full-disk test seam (util/outputfile injectFullDisk, at the db's one write step)
 * read "cannot write NAME: No space left on device", as any other output's.
 */
Result<std::filesystem::path> writeNewDb(const std::filesystem::path& folder, const std::string& stem,
                                         const std::string& extension, DbName name,
                                         const std::function<std::optional<std::string>(WritableDb&)>& fill,
                                         const std::string& errorId);

} // namespace probescope::graph::detail
