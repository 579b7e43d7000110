// SPDX-License-Identifier: Apache-2.0
// The CLI side of the MPI engine: detects an MPI launcher from its environment and only then opens
// libprobescope-cli-mpi.so (mpischeduler.cpp) with dlopen. Without a launcher nothing of MPI is loaded, so the
// CLI starts (and starts as fast) where no MPI runtime is installed.
#include "jobcli.h"
#include "plugindirs.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace probescope::cli {

namespace {

constexpr const char* kPluginFile = "libprobescope-cli-mpi.so";
constexpr int kPluginAbi = 3; // the plugin's probescope_cli_mpi_abi()

long envNumber(const char* name)
{
    const char* v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : -1;
}

} // namespace

bool launchedByMpi()
{
    // Open MPI's mpirun, then PMI/PMIx launchers (MPICH's mpiexec, Slurm's srun --mpi=pmi2|pmix). A launch of
    // one process is not worth an MPI runtime: the local threads do the same.
    for (const char* size : { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" }) {
        if (envNumber(size) > 1)
            return true;
    }
    // srun --mpi=pmix gives each task PMIX_RANK but no size of its own; Slurm's task count stands in.
    return std::getenv("PMIX_RANK") && envNumber("SLURM_NTASKS") > 1;
}

std::unique_ptr<job::PairScheduler> loadMpiScheduler(std::string& error)
{
    std::string tried;
    for (const std::filesystem::path& dir : pluginDirs()) {
        const std::string file = (dir / kPluginFile).string();
        // Never closed: MPI is finalised by the scheduler's destructor, which lives in the plugin.
        void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (!handle) {
            const char* why = ::dlerror();
            tried += "\n  " + file + ": " + (why ? why : "cannot be loaded");
            continue;
        }
        auto abi = reinterpret_cast<int (*)()>(::dlsym(handle, "probescope_cli_mpi_abi"));
        auto make = reinterpret_cast<job::PairScheduler* (*)()>(::dlsym(handle, "probescope_cli_mpi_make_scheduler"));
        if (!abi || !make) {
            tried += "\n  " + file + ": not this probescope-cli's MPI plugin";
            continue;
        }
        if (const int version = abi(); version != kPluginAbi) {
            // A plugin of another release (an older probescope-mpi beside a newer probescope): its scheduler would
            // not fit this CLI's loop, so it is never used.
            tried += "\n  " + file + ": an MPI plugin of another probescope-cli release (plugin ABI "
                + std::to_string(version) + ", this probescope-cli needs " + std::to_string(kPluginAbi)
                + "); install the probescope-mpi of the same release";
            continue;
        }
        return std::unique_ptr<job::PairScheduler>(make());
    }
    // The plugin ships in its own package (probescope-mpi, a Recommends of probescope), so a user who declined
    // recommended packages needs to be told which one to add, not only which file is missing.
    error = "started by an MPI launcher, but the MPI plugin (" + std::string(kPluginFile)
        + ", Open MPI) could not be loaded. Install it with `apt install probescope-mpi` (the package that"
          " holds it), or build ProbeScope with libopenmpi-dev installed; run without mpirun to compare the"
          " job with local threads. Tried:" + tried;
    return nullptr;
}

} // namespace probescope::cli
