// SPDX-License-Identifier: Apache-2.0
#include "tensor/tensor.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <system_error>

namespace probescope::tensor {

namespace fs = std::filesystem;

namespace {

Diagnostic fileError(const fs::path& path, std::string id, std::string message)
{
    return makeError(std::move(id), SourceLocation { path.string(), std::nullopt, 0, 0 }, std::move(message));
}

std::string quoted(std::string_view text)
{
    return '"' + std::string(text) + '"';
}

bool isInside(const fs::path& child, const fs::path& parent)
{
    auto c = child.begin();
    for (auto p = parent.begin(); p != parent.end(); ++p, ++c) {
        if (c == child.end() || *c != *p)
            return false;
    }
    return true;
}

/**
 * Follows every symbolic link in `relative`, starting from the already canonical `base`, without
 * needing the links' targets to exist: std::filesystem::weakly_canonical stops at the first missing
 * element, so a dangling link pointing outside would look harmless to it. nullopt means a loop.
 */
std::optional<fs::path> resolveLinks(const fs::path& base, const fs::path& relative)
{
    fs::path current = base;
    std::deque<fs::path> pending(relative.begin(), relative.end());
    int hops = 0;
    while (!pending.empty()) {
        const fs::path part = pending.front();
        pending.pop_front();
        if (part.empty() || part == ".")
            continue;
        if (part == "..") { // only reachable through a link target; `current` holds no links
            current = current.parent_path();
            continue;
        }
        const fs::path next = current / part;
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(next, ec))) {
            current = next;
            continue;
        }
        if (++hops > 40) // the limit Linux applies (MAXSYMLINKS)
            return std::nullopt;
        const fs::path target = fs::read_symlink(next, ec);
        if (ec)
            return std::nullopt;
        if (target.is_absolute())
            current = target.root_path();
        const fs::path rest = target.is_absolute() ? target.relative_path() : target;
        pending.insert(pending.begin(), rest.begin(), rest.end());
    }
    return current;
}

std::string lowerExtension(const fs::path& path)
{
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; });
    return ext;
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            text += ", ";
        text += std::to_string(shape[i]);
    }
    return text + ']';
}

} // namespace

Result<fs::path> resolveDataFile(const fs::path& tensorDir, std::string_view dataName)
{
    if (dataName.empty())
        return fileError(tensorDir, "tensor.path-invalid", "the data_name is empty");
    if (dataName.find('\0') != std::string_view::npos)
        return fileError(tensorDir, "tensor.path-invalid", "the data_name contains a NUL byte");

    const fs::path name(dataName);
    if (name.is_absolute() || name.has_root_path()) {
        return fileError(tensorDir, "tensor.path-escape",
                         "data_name " + quoted(dataName) + " is an absolute path; it must name a file inside "
                             + tensorDir.string());
    }
    for (const fs::path& part : name) {
        if (part == "..") {
            return fileError(tensorDir, "tensor.path-escape",
                             "data_name " + quoted(dataName) + " contains \"..\"; it must name a file inside "
                                 + tensorDir.string());
        }
    }

    std::error_code ec;
    const fs::path realDir = fs::canonical(tensorDir, ec);
    if (ec) {
        return fileError(tensorDir, "tensor.missing",
                         "the tensor folder " + tensorDir.string() + " cannot be opened: " + ec.message());
    }
    const fs::path candidate = tensorDir / name;
    const std::optional<fs::path> realFile = resolveLinks(realDir, name);
    if (!realFile)
        return fileError(candidate, "tensor.path-invalid",
                         "data_name " + quoted(dataName) + " goes through a symbolic link loop or an unreadable link");
    if (!isInside(*realFile, realDir)) {
        return fileError(candidate, "tensor.path-escape",
                         "data_name " + quoted(dataName) + " resolves to " + realFile->string()
                             + ", outside the tensor folder " + realDir.string() + " (through a symbolic link)");
    }
    const fs::file_status status = fs::status(*realFile, ec);
    if (ec || !fs::exists(status))
        return fileError(candidate, "tensor.missing", "the tensor file named by data_name does not exist");
    if (!fs::is_regular_file(status))
        return fileError(candidate, "tensor.missing", "the path named by data_name is not a regular file");
    // The checked path is the one handed back, so the file opened is the file that was checked.
    return *realFile;
}

Result<Tensor> loadTensorFile(const fs::path& tensorDir, std::string_view dataName)
{
    auto resolved = resolveDataFile(tensorDir, dataName);
    if (!resolved)
        return resolved.error();
    const std::string ext = lowerExtension(*resolved);
    if (ext == ".pt" || ext == ".pth")
        return loadPt(*resolved);
    if (ext == ".npy")
        return loadNpy(*resolved);
    return fileError(*resolved, "tensor.format-unknown",
                     "cannot tell the tensor format of " + quoted(dataName) + " (expected a .pt or .npy file)");
}

Diagnostics checkAgainstMetadata(const Tensor& t, std::string_view dtypeText, const std::vector<std::int64_t>& shape,
                                 const std::string& fileForMessages)
{
    Diagnostics out;
    const SourceLocation where { fileForMessages, std::nullopt, 0, 0 };
    const std::optional<DType> declared = parseDType(dtypeText);
    if (!declared) {
        out.push_back(makeError("tensor.dtype-unknown", where,
                                "dump.json gives dtype " + quoted(dtypeText) + ", which ProbeScope does not know; the file holds "
                                    + torchName(t.dtype)));
    } else if (*declared == DType::BFloat16 && t.dtype == DType::Float32) {
        // numpy has no bfloat16, so MindSpore's msprobe widens bfloat16 tensors to float32 before saving .npy.
        out.push_back(makeWarning("tensor.dtype-widened", where,
                                  "dump.json says " + std::string(dtypeText)
                                      + " but the file holds torch.float32 (bfloat16 widened for saving)"));
    } else if (*declared != t.dtype) {
        out.push_back(makeError("tensor.dtype-mismatch", where,
                                "dump.json says dtype " + std::string(dtypeText) + " but the file holds "
                                    + torchName(t.dtype)));
    }
    if (shape != t.shape) {
        out.push_back(makeError("tensor.shape-mismatch", where,
                                "dump.json says shape " + shapeText(shape) + " but the file holds "
                                    + shapeText(t.shape)));
    }
    return out;
}

} // namespace probescope::tensor
