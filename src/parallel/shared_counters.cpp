#include "parallel/shared_counters.h"

#include <exception>
#include <vector>

#include "core/error.h"

#include "parallel/native.h"

namespace rtm::parallel {

struct SharedCounters::Impl {
    std::vector<std::int64_t> local;  // one rank
#ifdef RTM_HAVE_MPI
    bool mpi = false;
    MPI_Win win = MPI_WIN_NULL;
    std::int64_t* base = nullptr;
#endif
};

SharedCounters::SharedCounters(const World& world, std::size_t count) : impl_(new Impl) {
    if (world.size() == 1) {
        impl_->local.assign(count, 0);
        return;
    }
#ifdef RTM_HAVE_MPI
    impl_->mpi = true;
    const MPI_Aint bytes = world.root() ? MPI_Aint(count * sizeof(std::int64_t)) : 0;
    if (MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, Native::comm(world), &impl_->base, &impl_->win) !=
        MPI_SUCCESS)
        fail("MPI", "cannot make the shared shot counters (MPI_Win_allocate)", "Check the MPI installation");
    if (world.root())
        for (std::size_t i = 0; i < count; ++i) impl_->base[i] = 0;
    world.barrier();  // zeroed before anyone uses them
    MPI_Win_lock_all(0, impl_->win);
#endif
}

SharedCounters::~SharedCounters() {
#ifdef RTM_HAVE_MPI
    // Freeing the window is collective: a rank leaving by an exception would wait there
    // for ranks still taking work, and never reach main's MPI_Abort.
    if (!impl_->mpi || std::uncaught_exceptions() > 0) return;
    MPI_Win_unlock_all(impl_->win);
    MPI_Win_free(&impl_->win);
#endif
}

std::int64_t SharedCounters::fetch_add(std::size_t i, std::int64_t v) {
#ifdef RTM_HAVE_MPI
    if (impl_->mpi) {
        std::int64_t was = 0;
        MPI_Fetch_and_op(&v, &was, MPI_INT64_T, 0, MPI_Aint(i), MPI_SUM, impl_->win);
        MPI_Win_flush(0, impl_->win);
        return was;
    }
#endif
    const std::int64_t was = impl_->local[i];
    impl_->local[i] += v;
    return was;
}

}  // namespace rtm::parallel
