#pragma once
// The check every output path gets before any work (rtm model, rtm migrate, rtm bench's
// --json): a run of hours must not end unable to write its result.
#include <string>

namespace rtm::io {

// Refuses `path` (named by `option`) when it cannot be written: an existing folder where
// a file goes (or a file where a folder goes), no write permission, an ancestor that is
// a file, or a folder where no entry can be made (tried: a probe folder made and removed
// at once), so that the real run would fail there. Leaves nothing behind (a dry run).
// A device, pipe, socket or symbolic link is refused (a finished output is renamed over
// its path, which would replace it), as is a file path naming no file (empty, or ending
// in '/').
void check_output_path(const std::string& path, const std::string& option, bool folder);

}  // namespace rtm::io
