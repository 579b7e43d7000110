// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace probescope {

/// "what PATH: strerror(err)", the one wording of a failed system call on a file.
std::string errnoText(std::string_view what, const std::filesystem::path& path, int err);

/// May a write put its file in place of one already at the name?
enum class ReplaceMode : std::uint8_t {
    Never,  ///< an output the user asked for: an existing name (file, folder, symlink, even dangling) is taken
    Allowed ///< only a file this process itself created and now rewrites (the dump writer's tail)
};

/// Why an output could not be written. `nameTaken` = something already holds the name (ReplaceMode::Never).
struct WriteFailure
{
    std::string message;
    bool nameTaken = false;
};

/**
 * @brief Writes `text` to `path` so that a reader sees either nothing (or the old file) or all of `text`.
 *
 * The text goes to a fresh temporary file beside `path` (created O_EXCL with the usual 0666 & ~umask
 * permissions), is flushed to disk and moved to `path`. With ReplaceMode::Never the move is
 * renameat2(RENAME_NOREPLACE), or link-then-unlink where the file system lacks it: the name is claimed
 * atomically, so of two concurrent runs exactly one gets it and the other sees `nameTaken`. A symlink at
 * `path` counts as taken (it is never followed or replaced). On failure the temporary file is removed.
 */
std::optional<WriteFailure> writeFileAtomically(const std::filesystem::path& path, std::string_view text,
                                                ReplaceMode mode = ReplaceMode::Never);

/**
 * @brief writeFileAtomically for text made piece by piece (a CSV of a GB): a fresh temporary file beside the
 * output, written with write(2), then flushed and claimed under a name that is not taken.
 *
 * claim() may be called again with another name after it reported `nameTaken`. A file never claimed is removed.
 */
class PendingFile
{
public:
    /// Creates the temporary file beside `path`; nullopt with `error` set when it cannot.
    static std::optional<PendingFile> create(const std::filesystem::path& path, std::string& error);
    PendingFile(PendingFile&& other) noexcept;
    PendingFile& operator=(PendingFile&&) = delete;
    ~PendingFile();

    /// Appends text; false once a write failed (finish() says why, naming the output, not the temporary file).
    bool write(std::string_view text);
    /// Flushes and closes the file; the first failure of write() or of this.
    std::optional<WriteFailure> finish();
    /// Moves the finished file to `path` as `mode` allows (ReplaceMode::Never: an existing name is `nameTaken`).
    std::optional<WriteFailure> claim(const std::filesystem::path& path, ReplaceMode mode = ReplaceMode::Never);

private:
    PendingFile(int fd, std::filesystem::path temp, std::filesystem::path target)
        : m_fd(fd), m_temp(std::move(temp)), m_target(std::move(target)) {}
    int m_fd = -1;
    std::filesystem::path m_temp;   ///< empty once claimed or given up
    std::filesystem::path m_target; ///< the output's name, which messages give (never the temporary name)
    std::string m_error;
};

/**
 * @brief Appends `text` to an output file this run created (a CSV growing row by row), all of it or none.
 *
 * Opened O_APPEND | O_NOFOLLOW (a symlink planted at the name is refused, never followed); a failed write or
 * close (a full disk) cuts the file back to its size before, so it never ends in half a row. Returns the
 * failure ("cannot write PATH: No space left on device"), or nothing.
 */
std::optional<std::string> appendToOutput(const std::filesystem::path& path, std::string_view text);

/// The steps of writing an output that the full-disk test seam can fail.
enum class OutputStep : std::uint8_t { Write, Fsync, Close };

/**
 * @brief The test seam for a full disk (docs/reliability.md, "Full disk"): true when this step is to fail with
 * ENOSPC.
 *
 * PROBESCOPE_TEST_ENOSPC=write:N (a bare N is the same), fsync:N or close:N makes the N-th write, fsync or
 * close of an output file in this process (counted from 1 over every output writer) fail with ENOSPC; N = 0
 * or "write:all" fails every one. Unset (every real run): always false, at the cost of one relaxed load.
 * setTestFullDisk() sets the same from a test; an empty spec turns it off.
 */
bool injectFullDisk(OutputStep step);
void setTestFullDisk(std::string_view spec);

/// write(2) of all of `text` to an output's descriptor, retried on short writes and EINTR; false with `err`
/// (errno) on failure, including the full-disk seam (which writes half of `text` first, as a full disk does).
bool writeOutputFd(int fd, std::string_view text, int& err);

/**
 * @brief One durability barrier for many outputs (a whole-job compare writes thousands of small files): while a
 * DeferredSync is open anywhere in the process, outputs are still written to a temporary file and renamed into
 * place under a free name, so every reader, and a process killed at any moment, sees each file complete or
 * absent; but the per-file fsync and the folder fsync are skipped. barrier() makes everything written so far
 * durable at once with one syncfs(2) of the output's file system (docs/scale-out.md, "Durability"): the caller
 * writes whatever vouches for those files (a marker, a summary) only after it.
 */
class DeferredSync
{
public:
    /// Opens `folder` (an output folder that exists) for the barrier; defers per-file syncs until destroyed.
    explicit DeferredSync(const std::filesystem::path& folder);
    ~DeferredSync();
    DeferredSync(const DeferredSync&) = delete;
    DeferredSync& operator=(const DeferredSync&) = delete;
    /// syncfs(2) of the folder's file system; the failure ("cannot make ... durable: ...") or nothing. The
    /// full-disk seam's fsync step applies.
    std::optional<std::string> barrier();

private:
    int m_fd = -1;
    std::filesystem::path m_folder;
    int m_openError = 0;
};

/// Whether a DeferredSync is open (per-file fsyncs are left to its barrier).
bool syncDeferred();

/// Moves `from` to `to` unless `to` exists (renameat2 RENAME_NOREPLACE, link-then-unlink fallback).
std::optional<WriteFailure> renameNoReplace(const std::filesystem::path& from, const std::filesystem::path& to);

/// fsync(2) of a file a library wrote by its path (libxlsxwriter's workbook, in a createTempBeside file), opened
/// O_NOFOLLOW; the full-disk seam's fsync step applies. false with errno set.
bool syncOutputFile(const std::filesystem::path& path);

/// fsync(2) of a folder after a file was moved into it (renameNoReplace): persists the rename. Best effort.
void syncOutputFolder(const std::filesystem::path& folder);

/// Creates a fresh, empty temporary file beside `path` (O_EXCL) for writers that need a path, not text;
/// its name ends in `suffix`. The caller removes it or moves it with renameNoReplace.
std::optional<std::filesystem::path> createTempBeside(const std::filesystem::path& path, std::string_view suffix,
                                                      std::string& error);

/**
 * @brief Writes a new output file under the first free name: `folder/stem + extension`, then
 * `stem_1 + extension`, `stem_2 + extension`, ... Each name is claimed atomically, so concurrent
 * runs into one folder all succeed, under different names. Returns the name written, or the error.
 */
std::optional<std::filesystem::path> writeToFreeName(const std::filesystem::path& folder, std::string_view stem,
                                                     std::string_view extension, std::string_view text,
                                                     std::string& error);

/**
 * @brief writeToFreeName for a file a writer made itself (a SQLite db in createTempBeside's file): moves the
 * finished `temp` to the first free name of the same series (`stem + extension`, `stem_1 + extension`, ...) with
 * renameNoReplace. Never replaces (a symlink at a name is taken); on failure `temp` is left for the caller.
 */
std::optional<std::filesystem::path> claimFreeName(const std::filesystem::path& temp, const std::filesystem::path& folder,
                                                   std::string_view stem, std::string_view extension,
                                                   std::string& error);

} // namespace probescope
