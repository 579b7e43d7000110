// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/ptnative.h"
#include "core/tensor/tensor.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

namespace probescope::tensor {

/**
 * @brief The one way a compare profile reaches tensor data: one side's tensor folder, bound to its dump folder.
 *
 * Every profile (msprobe 1.2, msprobe 26, ptdbg) gets a resolver per side from its caller and has no other way to
 * open a tensor file: it hands a data name, never a path. A data name resolves to a regular file strictly inside
 * the tensor folder (TensorFolder::resolve: no "..", no absolute name, no symbolic link leaving the folder), and
 * the tensor folder itself must lie inside the dump folder once every link is resolved: a `dump_tensor_data` (or
 * a ptdbg `.npy` folder) that is a symbolic link to another dump's folder would otherwise compare the NPU with the
 * bench's own tensors. A link that stays inside the dump folder is followed. See docs/reliability.md, "One tensor resolver".
 *
 * Error ids: tensor.path-escape (the name or the folder leaves the dump), tensor.path-invalid, tensor.missing (the
 * only id meaning "there is no such file"); every other error of load()/openPt() means the file is there and damaged
 * or not a tensor (tensor.truncated, tensor.pt-corrupt, tensor.npy-header, ...). Safe from many threads.
 *
 * The folder is checked on first use, not when the resolver is made (once, by whichever thread asks first, before
 * anything is resolved or opened): a statistics dump has no tensor file, and a whole job of 10,000 ranks made a
 * resolver per side and pair whose checks (two walks of the path, a readlink per component) nothing ever used.
 */
class TensorResolver
{
public:
    /// `dumpDir`: the folder of the dump file (dump.json's, or the .pkl's); `tensorDir`: where its data names live.
    /// A tensorDir equal to dumpDir (a ptdbg data folder named by itself) checks only the names.
    TensorResolver(const std::filesystem::path& dumpDir, std::filesystem::path tensorDir);

    /// The tensor folder as given (for messages).
    const std::filesystem::path& folder() const { return m_tensorDir; }

    /// Set when the tensor folder exists but leaves the dump folder (tensor.path-escape): every resolve() fails.
    const std::optional<Diagnostic>& folderProblem() const;

    /// Whether the tensor folder exists as a folder (not an escape).
    bool folderExists() const;

    Result<DataFile> resolve(std::string_view dataName) const;

    /// resolve() + the reader chosen by extension (.pt/.pth, .npy; else tensor.format-unknown).
    Result<Tensor> load(std::string_view dataName) const;

    /// resolve() and an open of the file, in fewer system calls (TensorFolder::open: same rules and errors).
    Result<OpenedDataFile> open(std::string_view dataName) const;
    /// open() with a small file read whole into `buffer` (TensorFolder::open: one system call fewer per file).
    Result<OpenedDataFile> open(std::string_view dataName, ReadBuffer& buffer, std::uint64_t wholeFileLimit) const;

    /// open() + openPtStream (the streamed real-data compare).
    Result<PtStream> openPt(std::string_view dataName, ReadBuffer& buffer) const;

    /// openPtStream on a file this resolver's resolve() returned: a caller that has already resolved the name
    /// (to check its size) does not pay a second lstat per file (the small-tensor pair opens 23,000 files).
    Result<PtStream> openPt(const DataFile& resolved, ReadBuffer& buffer) const;

    /// openPtStream on a file this resolver's open() returned (a caller that checks the size first).
    Result<PtStream> openPt(OpenedDataFile opened, ReadBuffer& buffer) const;

    /// Starts reading a resolved file into the page cache in the background (readAheadInBackground); does nothing on
    /// any error.
    void prefetch(std::string_view dataName) const;

private:
    /// The folder's check (the constructor's work before it was deferred): sets m_folder and m_folderProblem once.
    void check() const;

    std::filesystem::path m_dumpDir;
    std::filesystem::path m_tensorDir;
    mutable std::once_flag m_checked;
    mutable std::shared_ptr<const TensorFolder> m_folder;      ///< set by check()
    mutable std::optional<Diagnostic> m_folderProblem;          ///< set by check()
};

/// A shared resolver (the same folder pair gives the same instance while the folders do not change).
std::shared_ptr<const TensorResolver> makeTensorResolver(const std::filesystem::path& dumpDir,
                                                         const std::filesystem::path& tensorDir);

} // namespace probescope::tensor
