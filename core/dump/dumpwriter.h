// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"
#include "core/util/pytext.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::dump {

/// Appends `v` as Python's json.dump(allow_nan=True) spells a float: repr() ("0.1", "1e-05", "2.0",
/// "1e+16"), and NaN, Infinity, -Infinity for the values JSON has no number for.
void appendPyFloat(std::string& out, double v);

/// Appends `s` quoted as json.dump(ensure_ascii=True) writes it: \" \\ \n \r \t \b \f, \u00XX for other
/// control characters and DEL, and \uXXXX (surrogate pairs above U+FFFF) for everything outside ASCII.
/// Bytes that are not valid UTF-8 are written as U+FFFD.
using probescope::appendPyJsonString;
/// The dump writer's name for it.
inline void appendPyString(std::string& out, std::string_view s) { appendPyJsonString(out, s); }

/**
 * @brief Builds JSON text laid out exactly as Python's json.dump(obj, f, indent=1) lays it out.
 *
 * One member or element per line, indented one space per level, ", " never used (a "," ends the line),
 * ": " after keys, empty containers as "{}" / "[]". `depth` is the nesting level of the first value
 * written, so text for a value that will sit inside a larger document lines up with it: an entry of
 * dump.json's "data" object is written at depth 2.
 */
class PyJsonWriter
{
public:
    explicit PyJsonWriter(std::string& out, unsigned depth = 0);

    void beginObject();
    void endObject();
    void beginArray();
    void endArray();
    void key(std::string_view k);

    void string(std::string_view s);
    void integer(std::int64_t v);
    void number(double v);
    void boolean(bool b);
    void null();

private:
    void beginValue();
    void openContainer(char c);
    void closeContainer(char c);
    void lineBreak(std::size_t level);

    std::string& m_out;
    unsigned m_depth;
    std::vector<bool> m_nonEmpty; ///< one per open container: has a member been written yet
    bool m_afterKey = false;
};

/// The fixed members that open dump.json / debug.json, in msprobe's order.
struct DumpWriterHeader
{
    std::string task;                       ///< statistics, tensor, overflow_check
    std::string level;                      ///< L0, L1, mix, debug
    std::string framework = "pytorch";
    std::optional<std::string> dumpDataDir; ///< written as null when absent (statistics)
    std::string dumpFileName = "dump.json"; ///< "debug.json" for level debug
    bool withConstruct = true;              ///< also write construct.json
    bool withStack = true;                  ///< also write stack.json
};

/**
 * @brief Writes one rank's dump.json, construct.json and stack.json while a run goes on.
 *
 * The layout is msprobe's (Python json.dump, indent=1, key order task, level, framework, dump_data_dir,
 * data). Crash safety, beyond msprobe, which writes its json files only at stop():
 *
 * - dump.json is appended to, one complete entry per write, so a process killed at any moment leaves a
 *   prefix of the final file: ProbeScope's truncated-dump salvage reads every entry but the one being
 *   written (and reports the file as truncated, which it is).
 * - construct.json and stack.json stay valid JSON between writes: each new member overwrites the
 *   closing text of the file and brings its own "}". The kernel copies a write page by page and checks
 *   for a kill only between pages, so a write can be cut only where it crosses a page boundary: a
 *   cut leaves a prefix of the new text, never a mix of old and new bytes, when at most one old byte
 *   lies behind the first boundary. When more would (a two-byte closing text astride a boundary), the
 *   file is replaced through a temporary file and rename() instead.
 * - finish() closes dump.json and gives construct.json / stack.json msprobe's final "\n}" the same way,
 *   so after it every file is complete and valid.
 *
 * Not thread-safe: one writer per rank folder, driven by one thread at a time.
 */
class DumpWriter
{
public:
    /// Creates `rankDir` (and its parents) and starts its files afresh, replacing earlier ones.
    static Result<std::unique_ptr<DumpWriter>> create(const std::filesystem::path& rankDir, DumpWriterHeader header);

    ~DumpWriter(); ///< finish()es if still open; errors are lost then, call finish() to see them
    DumpWriter(const DumpWriter&) = delete;
    DumpWriter& operator=(const DumpWriter&) = delete;

    /// Appends a "data" member. `valueText` is its value, laid out at depth 2 (PyJsonWriter(text, 2)).
    std::optional<Diagnostic> addEntry(std::string_view key, std::string_view valueText);
    /// Adds a construct.json member: key -> parent key, or null when `parent` is empty.
    std::optional<Diagnostic> addConstruct(std::string_view key, std::string_view parent);
    /// Adds a stack.json member in msprobe 1.2's form: key -> list of frame strings.
    std::optional<Diagnostic> addStack(std::string_view key, const std::vector<std::string>& frames);

    /// Completes every file (see the class comment). Further add*() calls need resume() first.
    std::optional<Diagnostic> finish();
    /// Continues a finish()ed folder: later entries are appended to the same files.
    std::optional<Diagnostic> resume();
    /// Ends a folder whose later entries were lost (a write failed): dump.json is cut back to its last
    /// complete entry and left without its closing text, so that every reader reports it as truncated
    /// there instead of taking it for complete; construct.json and stack.json are completed as by
    /// finish(). isFinished() afterwards.
    std::optional<Diagnostic> abandon();

    bool isFinished() const { return m_finished; }
    std::uint64_t entryCount() const { return m_entries; }
    const std::filesystem::path& dir() const { return m_dir; }
    const std::filesystem::path& dumpFilePath() const { return m_dumpPath; }

private:
    /// construct.json or stack.json: an object kept valid between writes (see the class comment).
    struct ObjectFile
    {
        std::filesystem::path path;
        int fd = -1;
        std::uint64_t closeAt = 1; ///< offset of the closing text ("}" while writing, "\n}" once finished)
        std::uint64_t members = 0;
        bool finalTail = false;    ///< the closing text is msprobe's "\n}" (after finish())
    };

    DumpWriter() = default;
    std::optional<Diagnostic> openObjectFile(ObjectFile& file, const std::filesystem::path& path);
    std::optional<Diagnostic> addMember(ObjectFile& file, std::string_view memberText);
    std::optional<Diagnostic> finishObjectFile(ObjectFile& file);
    std::optional<Diagnostic> replaceTail(ObjectFile& file, std::string_view tail);

    std::filesystem::path m_dir;
    std::filesystem::path m_dumpPath;
    DumpWriterHeader m_header;
    int m_dumpFd = -1;
    std::uint64_t m_dumpEnd = 0; ///< end of what dump.json holds while open (no closing text)
    std::uint64_t m_entries = 0;
    bool m_finished = false;
    ObjectFile m_construct;
    ObjectFile m_stack;
    std::string m_scratch;
};

} // namespace probescope::dump
