// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/dtype.h"
#include "core/util/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::tensor {

/// A dense, C-contiguous, little-endian tensor held in memory.
struct Tensor
{
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape; ///< empty for a 0-d tensor
    std::vector<std::byte> data;     ///< numel() * dtypeSize(dtype) bytes

    std::int64_t numel() const;
    /// Element i converted to double (bool -> 0/1, float16/bfloat16 exactly).
    double valueAt(std::int64_t i) const;
};

/**
 * @brief Max, Min, Mean and Norm (L2) as msprobe writes them, computed in one pass with double accumulation.
 *
 * Follows torch: one NaN element makes all four values NaN (nanCount says how many there were);
 * infinities propagate (inf and -inf together give a NaN mean). An empty tensor has count 0 and
 * NaN for all four values, where torch refuses max/min and msprobe writes null.
 * Bool counts as 0/1 and integers are converted to double.
 */
struct TensorStats
{
    double max = 0;
    double min = 0;
    double mean = 0;
    double norm = 0;
    std::int64_t nanCount = 0;
    std::int64_t infCount = 0;
    std::int64_t count = 0;
};

TensorStats computeStats(const Tensor& t);

/**
 * @brief Reads a NumPy .npy file (versions 1-3, C or Fortran order, either byte order).
 *
 * Error ids: tensor.missing, io.read, tensor.npy-format (no magic), tensor.npy-version,
 * tensor.npy-header (unparsable header, negative or overflowing shape), tensor.dtype-unsupported,
 * tensor.truncated (less data than the shape needs), tensor.npy-trailing (more data).
 */
Result<Tensor> loadNpy(const std::filesystem::path& path);

/**
 * @brief Reads a .pt file written by torch.save (zip format) holding one tensor.
 *
 * Uses ProbeScope's own reader (ptnative.h), which accepts only the layout torch.save writes for one
 * plain tensor and needs no LibTorch at run time.
 * Error ids: tensor.missing, io.read, tensor.pt-format (not a zip: legacy format or not a .pt),
 * tensor.pt-corrupt (damaged archive or pickle, or a zip torch.save would not write),
 * tensor.pt-not-tensor (dict, list, nn.Parameter, other object), tensor.dtype-unsupported
 * (complex, quantized, ...). Never crashes on damaged input.
 */
Result<Tensor> loadPt(const std::filesystem::path& path);


class ReadBuffer;

/// A regular file found by TensorFolder::resolve.
struct DataFile
{
    std::filesystem::path path; ///< real (link-free) path
    std::uint64_t size = 0;
};

/// A data file opened for reading by TensorFolder::open: the descriptor is owned (closed with the object).
class OpenedDataFile
{
public:
    OpenedDataFile() = default;
    OpenedDataFile(DataFile file, int fd)
        : m_file(std::move(file))
        , m_fd(fd)
    {
    }
    /// The path as text: a std::filesystem::path (its components parsed) is made only if file() is asked for,
    /// which a file read without error never is (thousands of small files per compare).
    OpenedDataFile(std::string pathText, std::uint64_t size, int fd)
        : m_pathText(std::move(pathText))
        , m_fd(fd)
    {
        m_file.size = size;
    }
    OpenedDataFile(OpenedDataFile&& other) noexcept;
    OpenedDataFile& operator=(OpenedDataFile&& other) noexcept;
    OpenedDataFile(const OpenedDataFile&) = delete;
    OpenedDataFile& operator=(const OpenedDataFile&) = delete;
    ~OpenedDataFile();

    const DataFile& file() const;
    std::uint64_t size() const { return m_file.size; }
    /// The whole file, when TensorFolder::open read it already (into the ReadBuffer it was given); else null.
    const std::byte* readWhole() const { return m_readWhole; }
    void setReadWhole(const std::byte* bytes) { m_readWhole = bytes; }
    /// The length of file().path's text, without making the path.
    std::size_t pathLength() const { return m_pathText.empty() ? m_file.path.native().size() : m_pathText.size(); }
    /// Hands the descriptor over (the caller closes it).
    int release();

private:
    mutable DataFile m_file;
    mutable std::string m_pathText; ///< not empty: m_file.path is still to be made from it
    int m_fd = -1;
    const std::byte* m_readWhole = nullptr;
};

/**
 * @brief A tensor folder whose real path is resolved once, for resolving many data_names.
 *
 * resolve() follows the rules of resolveDataFile and gives the same errors, but a plain file name
 * costs one lstat() instead of canonicalizing the folder again. Immutable once built, so one instance
 * can serve several threads.
 */
class TensorFolder
{
public:
    explicit TensorFolder(std::filesystem::path dir);
    ~TensorFolder();
    TensorFolder(const TensorFolder&) = delete;
    TensorFolder& operator=(const TensorFolder&) = delete;

    const std::filesystem::path& dir() const { return m_dir; }
    Result<DataFile> resolve(std::string_view dataName) const;

    /**
     * resolve() and an open of the file it finds, with the same rules and errors, in fewer system calls: a
     * plain file name (the usual case) is opened relative to the folder's own descriptor with O_NOFOLLOW
     * (no lstat, no walk of the folder's path again) and checked with fstat to be a regular file; a name
     * that is a symbolic link, names a subfolder or fails otherwise goes through resolve() and
     * openRegularFile as before. Error ids as resolve(), plus io.read when the file cannot be opened.
     */
    Result<OpenedDataFile> open(std::string_view dataName) const;

    /**
     * open(), and a file of up to `wholeFileLimit` bytes read whole into `buffer` (OpenedDataFile::readWhole), in
     * one system call fewer: a plain name costs openat + one pread + (later) close. The pread asks for
     * kProbeBytes; a shorter answer is the whole file, so no fstat is needed for its size, and pread itself
     * refuses what could stand in a regular file's place: a FIFO (ESPIPE), a folder (EISDIR), while a socket
     * cannot be opened (ENXIO). An empty answer, an error or a full one (a larger file) takes open()'s fstat and
     * its verdicts, so an empty file, /dev/null or /dev/zero in the folder are judged as open() judges them. The
     * one thing not asked is the type of a device node (only root can make one) whose read ends short: its bytes
     * are read as a file's.
     */
    Result<OpenedDataFile> open(std::string_view dataName, ReadBuffer& buffer, std::uint64_t wholeFileLimit) const;
    static constexpr std::size_t kProbeBytes = 16 * 1024;

    /**
     * A shared instance per folder path, safe to call from several threads. It is built again when
     * the path no longer names the same directory (one stat() per call), e.g. after a dump was replaced.
     */
    static std::shared_ptr<const TensorFolder> cached(const std::filesystem::path& dir);

private:
    /// Both open()s: `buffer` null = no read.
    Result<OpenedDataFile> openReading(std::string_view dataName, ReadBuffer* buffer, std::uint64_t wholeFileLimit) const;

    std::filesystem::path m_dir;
    std::filesystem::path m_realDir; ///< empty when the folder could not be resolved
    std::string m_problem;           ///< why, then
    std::uint64_t m_device = 0;
    std::uint64_t m_inode = 0;
    int m_dirFd = -1; ///< the real folder, opened once (open()'s openat base); -1 when it could not be
};

/**
 * @brief Resolves a data_name under a tensor folder, refusing names that would leave it.
 *
 * Rejects absolute names, any ".." component, NUL bytes, and names whose real path (symlinks resolved)
 * lies outside the real path of `tensorDir`. Returns the real (link-free) path of the file.
 * Error ids: tensor.path-invalid (empty, NUL, link loop), tensor.path-escape, tensor.missing.
 * Goes through TensorFolder::cached, so the folder itself is resolved once, not per call.
 */
Result<std::filesystem::path> resolveDataFile(const std::filesystem::path& tensorDir, std::string_view dataName);

/// resolveDataFile + loadPt/loadNpy chosen by extension (.pt/.pth, .npy; else tensor.format-unknown).
Result<Tensor> loadTensorFile(const std::filesystem::path& tensorDir, std::string_view dataName);

/**
 * @brief Compares a loaded tensor with what dump.json says about it (dtype text as written, shape).
 *
 * Errors: tensor.dtype-unknown, tensor.dtype-mismatch, tensor.shape-mismatch. A bfloat16 entry
 * held as float32 is only a warning, tensor.dtype-widened: numpy has no bfloat16, so MindSpore
 * dumps widen it when saving .npy.
 */
Diagnostics checkAgainstMetadata(const Tensor& t, std::string_view dtypeText, const std::vector<std::int64_t>& shape,
                                 const std::string& fileForMessages);

} // namespace probescope::tensor
