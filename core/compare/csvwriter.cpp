// SPDX-License-Identifier: Apache-2.0
#include "compare/csvwriter.h"
#include "util/fileio.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

namespace probescope::compare {

namespace {

bool needsQuotes(std::string_view field)
{
    return field.find_first_of(",\"\n\r") != std::string_view::npos;
}

void appendField(std::string& out, std::string_view field)
{
    if (!needsQuotes(field)) {
        out += field;
        return;
    }
    out += '"';
    for (char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

void appendLine(std::string& out, const std::vector<std::string>& fields)
{
    if (fields.size() == 1 && fields.front().empty()) {
        out += "\"\"";
        return;
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i)
            out += ',';
        appendField(out, fields[i]);
    }
}

std::string errnoText(const std::string& what, const std::filesystem::path& path, int err)
{
    return what + " " + path.string() + ": " + std::strerror(err);
}

} // namespace

std::string csvLine(const std::vector<std::string>& fields)
{
    std::string out;
    appendLine(out, fields);
    return out;
}

std::string toCsv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows)
{
    std::string out;
    std::size_t estimate = 0;
    for (const auto& field : header)
        estimate += field.size() + 1;
    out.reserve(estimate * (rows.size() + 1));
    appendLine(out, header);
    out += '\n';
    for (const auto& row : rows) {
        appendLine(out, row);
        out += '\n';
    }
    return out;
}

std::vector<std::vector<std::string>> parseCsv(std::string_view text)
{
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    bool fieldStarted = false; // the current record has at least one field (possibly empty)
    bool atFieldStart = true; // a quote is special only as a field's first character
    std::size_t i = 0;
    const std::size_t n = text.size();

    const auto endRecord = [&] {
        if (fieldStarted)
            record.push_back(std::move(field));
        records.push_back(std::move(record));
        record.clear();
        field.clear();
        fieldStarted = false;
        atFieldStart = true;
    };

    while (i < n) {
        const char c = text[i];
        if (c == '"' && atFieldStart) {
            // Quoted field: runs to the closing quote; text after it up to the separator is kept as is.
            fieldStarted = true;
            atFieldStart = false;
            ++i;
            while (i < n) {
                if (text[i] == '"') {
                    if (i + 1 < n && text[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += text[i++];
            }
            continue;
        }
        if (c == ',') {
            record.push_back(std::move(field));
            field.clear();
            fieldStarted = true;
            atFieldStart = true;
            ++i;
            continue;
        }
        if (c == '\n' || c == '\r') {
            i += (c == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;
            endRecord();
            continue;
        }
        field += c;
        fieldStarted = true;
        atFieldStart = false;
        ++i;
    }
    if (fieldStarted || !record.empty())
        endRecord();
    return records;
}

bool writeFileAtomically(const std::filesystem::path& path, std::string_view text, std::string* error)
{
    const auto fail = [&](std::string message) {
        if (error)
            *error = std::move(message);
        return false;
    };

    std::filesystem::path folder = path.parent_path();
    if (folder.empty())
        folder = ".";
    const std::string base = path.filename().string();
    if (base.empty())
        return fail("not a file path: " + path.string());

    // O_EXCL with a fresh name (not mkstemp) so the final file gets the permissions of a normal create.
    static std::atomic<unsigned> counter { 0 };
    std::filesystem::path temp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        const auto ticks = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
        temp = folder
            / ("." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-"
                + std::to_string(ticks % 1000000007ull));
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            return fail(errnoText("cannot create", temp, errno));
    }
    if (fd < 0)
        return fail("cannot create a temporary file next to " + path.string());

    int err = 0;
    bool ok = writeAllToFd(fd, text, err);
    std::string message;
    if (!ok)
        message = errnoText("cannot write", temp, err);
    if (ok && ::fsync(fd) != 0) {
        ok = false;
        message = errnoText("cannot flush", temp, errno);
    }
    if (::close(fd) != 0 && ok) {
        ok = false;
        message = errnoText("cannot close", temp, errno);
    }
    if (ok) {
        std::error_code ec;
        std::filesystem::rename(temp, path, ec);
        if (ec) {
            ok = false;
            message = "cannot rename " + temp.string() + " to " + path.string() + ": " + ec.message();
        }
    }
    if (!ok) {
        std::error_code ignored;
        std::filesystem::remove(temp, ignored);
        return fail(std::move(message));
    }
    // Persist the rename itself; failing here does not make the written file wrong.
    const int dirFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
    return true;
}

} // namespace probescope::compare
