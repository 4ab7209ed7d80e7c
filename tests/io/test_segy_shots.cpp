// Shot records through SEG-Y: write_shots then read_shots, unsorted files, the headers
// as another tool (segyio-catr) reads them, the shot index (one gather's samples at a
// time) and the writer that takes gathers as they come.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>

#include "io/shot_index.h"
#include "io/shot_io.h"
#include "segy_test_files.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// Three gathers with different receiver counts, written out of id order.
std::vector<ShotGather> three_shots() {
    std::vector<ShotGather> shots;
    for (long id : {20L, 10L, 30L}) {
        ShotGather g;
        g.id = id;
        g.nt = 50;
        g.dt = 0.002;
        g.source = {1000.0 + 10 * id, 250.5, 5.25};
        const int n = int(id / 10) + 3;
        for (int r = 0; r < n; ++r) {
            g.receivers.push_back({500.0 + 37.5 * r, 240.0 + 0.5 * r, 12.5});
            g.channels.push_back(r + 1);
        }
        g.data.resize(std::size_t(n) * g.nt);
        for (std::size_t k = 0; k < g.data.size(); ++k) g.data[k] = float(id) + 0.001f * float(k);
        shots.push_back(g);
    }
    return shots;
}

const ShotGather& by_id(const std::vector<ShotGather>& shots, long id) {
    for (const auto& s : shots)
        if (s.id == id) return s;
    FAIL("no gather " << id);
    return shots.front();
}

void check_same_gather(const ShotGather& a, const ShotGather& b) {
    CHECK(a.id == b.id);
    CHECK(a.nt == b.nt);
    CHECK(a.dt == Approx(b.dt));
    CHECK(a.source.x == Approx(b.source.x).margin(0.01));
    CHECK(a.source.y == Approx(b.source.y).margin(0.01));
    CHECK(a.source.z == Approx(b.source.z).margin(0.01));
    REQUIRE(a.ntraces() == b.ntraces());
    CHECK(a.channels == b.channels);
    for (std::size_t r = 0; r < a.ntraces(); ++r) {
        CHECK(a.receivers[r].x == Approx(b.receivers[r].x).margin(0.01));
        CHECK(a.receivers[r].y == Approx(b.receivers[r].y).margin(0.01));
        CHECK(a.receivers[r].z == Approx(b.receivers[r].z).margin(0.01));
    }
    CHECK(a.data == b.data);
}

// The "name value" lines a segyio tool prints, by name.
std::map<std::string, long> segyio_fields(const std::string& cmd) {
    std::map<std::string, long> fields;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    char line[256];
    while (std::fgets(line, sizeof line, p)) {
        std::istringstream in(line);
        std::string name;
        long value;
        if (in >> name >> value) fields[name] = value;
    }
    pclose(p);
    return fields;
}

// The trace-header fields segyio-catr prints for one trace (1-based).
std::map<std::string, long> catr(const std::string& path, int trace) {
    return segyio_fields("segyio-catr -t " + std::to_string(trace) + " '" + path + "'");
}

}  // namespace

TEST_CASE("shot gathers written and read back keep ids, geometry, channels and samples") {
    const auto dir = scratch("shots-roundtrip");
    const auto shots = three_shots();
    io::write_shots((dir / "shots.sgy").string(), shots);
    const auto back = io::read_shots((dir / "shots.sgy").string());
    REQUIRE(back.size() == 3);
    CHECK(back[0].id == 10);
    CHECK(back[1].id == 20);
    CHECK(back[2].id == 30);
    for (const auto& g : back) check_same_gather(g, by_id(shots, g.id));
    CHECK_FALSE(std::filesystem::exists(dir / "shots.sgy.tmp"));
}

TEST_CASE("traces of gathers interleaved in the file read back grouped by field record and sorted by channel") {
    const auto dir = scratch("shots-interleaved");
    const auto shots = three_shots();
    io::write_shots((dir / "sorted.sgy").string(), shots);
    // File order: 5 traces of id 20, then 4 of id 10, then 6 of id 30; deal them out
    // round-robin, channels descending within each gather.
    const std::vector<int> order = {4, 8, 14, 3, 7, 13, 2, 6, 12, 1, 5, 11, 0, 10, 9};
    copy_traces((dir / "sorted.sgy").string(), (dir / "interleaved.sgy").string(), order);
    const auto back = io::read_shots((dir / "interleaved.sgy").string());
    REQUIRE(back.size() == 3);
    for (const auto& g : back) check_same_gather(g, by_id(shots, g.id));
}

TEST_CASE("a gather with a channel given twice is refused naming the record and both traces") {
    const auto dir = scratch("shots-duplicated");
    io::write_shots((dir / "sorted.sgy").string(), three_shots());
    // The file appended to part of itself: the first gather's traces 1-3 again at the end
    // (an appended copy was once migrated twice without a word).
    copy_traces((dir / "sorted.sgy").string(), (dir / "twice.sgy").string(),
                {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 1, 2});
    const std::string path = (dir / "twice.sgy").string();
    const std::string msg = error_of([&] { io::ShotIndex index(path); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "two traces with"));
    CHECK(contains(msg, "byte 13"));
    CHECK(contains(msg, "traces 1 and 16"));
}

TEST_CASE("gathers without field record numbers are grouped by source position") {
    const auto dir = scratch("shots-no-ffid");
    const std::string path = (dir / "shots.sgy").string();
    const auto shots = three_shots();
    io::write_shots(path, shots);
    set_trace_field(path, -1, SEGY_TR_FIELD_RECORD, 0);
    const auto back = io::read_shots(path);
    REQUIRE(back.size() == 3);
    // Ids are ordinals in order of first appearance: ids 20, 10, 30 become 1, 2, 3.
    const long was[] = {20, 10, 30};
    for (int k = 0; k < 3; ++k) {
        CHECK(back[k].id == k + 1);
        ShotGather expected = by_id(shots, was[k]);
        expected.id = k + 1;
        check_same_gather(back[k], expected);
    }
}

TEST_CASE("a gather without channel numbers keeps the file order of its traces") {
    const auto dir = scratch("shots-no-channels");
    const std::string path = (dir / "shots.sgy").string();
    auto shots = three_shots();
    io::write_shots(path, shots);
    set_trace_field(path, -1, SEGY_TR_NUMBER_ORIG_FIELD, 0);
    const auto back = io::read_shots(path);
    for (const auto& g : back) check_same_gather(g, by_id(shots, g.id));
}

TEST_CASE("a shot file written by rtm carries the header values other tools read") {
    if (std::system("command -v segyio-catr > /dev/null 2>&1") != 0) {
        skip("segyio-catr is not installed (apt install segyio-bin)");
        return;
    }
    const auto dir = scratch("shots-headers");
    const std::string path = (dir / "shots.sgy").string();
    io::write_shots(path, three_shots());
    // Trace 8 of the file: the 3rd receiver of id 10 (after 5 traces of id 20).
    const auto f = catr(path, 8);
    INFO(path);
    CHECK(f.at("fldr") == 10);
    CHECK(f.at("tracf") == 3);
    CHECK(f.at("tracl") == 8);
    CHECK(f.at("tracr") == 8);
    CHECK(f.at("trid") == 1);
    CHECK(f.at("scalco") == -100);
    CHECK(f.at("scalel") == -100);
    CHECK(f.at("sx") == 110000);
    CHECK(f.at("sy") == 25050);
    CHECK(f.at("gx") == 57500);
    CHECK(f.at("gy") == 24100);
    CHECK(f.at("sdepth") == 525);
    CHECK(f.at("gelev") == -1250);
    CHECK(f.at("offset") == -525);  // group 525 m behind the source in X
    CHECK(f.at("cdpx") == (110000 + 57500) / 2);
    CHECK(f.at("cdpy") == (25050 + 24100) / 2);
    CHECK(f.at("ns") == 50);
    CHECK(f.at("dt") == 2000);

    const auto bin = segyio_fields("segyio-catb '" + path + "'");
    CHECK(bin.at("format") == 5);
    CHECK(bin.at("hns") == 50);
    CHECK(bin.at("hdt") == 2000);
    CHECK(bin.at("rev") == 256);
}

TEST_CASE("write_shots refuses gathers that disagree on nt or a dt of fractional microseconds") {
    const auto dir = scratch("shots-bad-sampling");
    const std::string path = (dir / "shots.sgy").string();
    auto shots = three_shots();
    shots[1].nt = 40;
    shots[1].data.resize(shots[1].ntraces() * 40);
    std::string msg = error_of([&] { io::write_shots(path, shots); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "shot 10 has nt 40"));

    shots = three_shots();
    for (auto& s : shots) s.dt = 0.0012345;
    msg = error_of([&] { io::write_shots(path, shots); });
    CHECK(contains(msg, "whole number of microseconds"));
    CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a shot index of an interleaved file holds each gather's geometry without samples and loads it as written") {
    const auto dir = scratch("shots-index");
    const auto shots = three_shots();
    io::write_shots((dir / "sorted.sgy").string(), shots);
    const std::vector<int> order = {4, 8, 14, 3, 7, 13, 2, 6, 12, 1, 5, 11, 0, 10, 9};
    copy_traces((dir / "sorted.sgy").string(), (dir / "interleaved.sgy").string(), order);
    const io::ShotIndex index((dir / "interleaved.sgy").string());
    REQUIRE(index.size() == 3);
    for (std::size_t k = 0; k < index.size(); ++k) {
        const ShotGather& geo = index.geometry(k);
        CHECK(geo.data.empty());
        const ShotGather g = index.load(k);
        check_same_gather(g, by_id(shots, geo.id));
        ShotGather without = g;
        without.data.clear();
        check_same_gather(geo, without);
    }
    CHECK(index.geometry(0).id == 10);
    CHECK(index.geometry(2).id == 30);
}

TEST_CASE("viking_small.segy through the shot index: every loaded trace is the file's trace of that record and channel") {
    const auto path = shared_file("field/viking_small.segy");
    if (path.empty()) return;
    const io::ShotIndex index(path.string());
    REQUIRE(index.size() == 4);
    std::vector<ShotGather> loaded;
    for (std::size_t k = 0; k < 4; ++k) loaded.push_back(index.load(k));
    // Independent of rtm's grouping: segyio's samples of each trace, by its own
    // field record (ids 3..6) and channel (1..120), bit for bit.
    SegyHandle f(path.string(), "rb");
    REQUIRE(f.traces == 480);
    const int nt = segy_samples(f.bin);
    REQUIRE(nt == 600);
    std::vector<char> header(SEGY_TRACE_HEADER_SIZE), raw(f.trsize);
    int same = 0;
    for (int i = 0; i < f.traces; ++i) {
        REQUIRE(segy_traceheader(f.fp, i, header.data(), f.trace0, f.trsize) == SEGY_OK);
        std::int32_t ffid, channel;
        segy_get_field(header.data(), SEGY_TR_FIELD_RECORD, &ffid);
        segy_get_field(header.data(), SEGY_TR_NUMBER_ORIG_FIELD, &channel);
        REQUIRE(segy_readtrace(f.fp, i, raw.data(), f.trace0, f.trsize) == SEGY_OK);
        REQUIRE(segy_to_native(segy_format(f.bin), nt, raw.data()) == SEGY_OK);
        const ShotGather& g = loaded.at(std::size_t(ffid - 3));
        same += std::memcmp(g.trace(std::size_t(channel - 1)), raw.data(), sizeof(float) * nt) == 0;
    }
    CHECK(same == 480);
}

TEST_CASE("a shot file replaced after it was indexed is refused when a gather is loaded") {
    const auto dir = scratch("shots-index-replaced");
    const std::string path = (dir / "shots.sgy").string();
    io::write_shots(path, three_shots());
    const io::ShotIndex index(path);
    auto fewer = three_shots();
    fewer.pop_back();
    io::write_shots(path, fewer);
    const std::string msg = error_of([&] { index.load(0); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "changed since it was indexed"));
}

TEST_CASE("gathers handed to the shot writer one by one in any order, or by joined writers, make the file write_shots makes, and an unfinished one leaves none") {
    const auto dir = scratch("shots-writer");
    const auto shots = three_shots();
    const std::string whole = (dir / "whole.sgy").string(), streamed = (dir / "streamed.sgy").string();
    io::write_shots(whole, shots);
    {
        std::vector<ShotGather> geometry = shots;
        for (auto& g : geometry) g.data.clear();
        io::ShotWriter out(streamed, geometry);
        CHECK(std::filesystem::exists(streamed + ".tmp"));
        for (std::size_t i = shots.size(); i-- > 0;) out.write(i, shots[i]);  // last first
        out.commit();
    }
    auto bytes = [](const std::string& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    CHECK(bytes(streamed) == bytes(whole));
    // As the ranks of a job write one file: one creates it, another joins and writes its own.
    const std::string shared = (dir / "shared.sgy").string();
    {
        io::ShotWriter creator(shared, shots);
        io::ShotWriter joined(shared, shots, io::ShotWriter::Role::Join);
        joined.write(2, shots[2]);
        creator.write(1, shots[1]);
        joined.write(0, shots[0]);
        joined.close();
        creator.close();
        creator.commit(false);
    }
    CHECK(bytes(shared) == bytes(whole));
    // A second writer of the same output (another rtm model run) is refused while the first
    // writes, and takes nothing from it: they shared PATH.tmp, one rename failed and the
    // other renamed a mix of both.
    const std::string twice = (dir / "twice.sgy").string();
    {
        io::ShotWriter first(twice, shots);
        CHECK(contains(error_of([&] { io::ShotWriter second(twice, shots); }), "another process is writing it"));
        CHECK(std::filesystem::exists(twice + ".tmp"));
        for (std::size_t i = 0; i < shots.size(); ++i) first.write(i, shots[i]);
        first.commit();
    }
    CHECK(bytes(twice) == bytes(whole));
    io::write_shots(twice, shots);  // and once it is done, the output is free again
    CHECK(bytes(twice) == bytes(whole));
    // A joined writer that an exception destroys (its rank failed) removes the file:
    // the creator's rank is then aborted, not unwound. One destroyed in the normal way,
    // having closed, leaves it to the creator to commit.
    const std::string failed = (dir / "failed.sgy").string();
    {
        io::ShotWriter creator(failed, shots);
        { io::ShotWriter joined(failed, shots, io::ShotWriter::Role::Join); }
        CHECK(std::filesystem::exists(failed + ".tmp"));
        try {
            io::ShotWriter joined(failed, shots, io::ShotWriter::Role::Join);
            joined.write(0, shots[0]);
            throw std::runtime_error("this rank's shot failed");
        } catch (const std::runtime_error&) {
        }
        CHECK_FALSE(std::filesystem::exists(failed + ".tmp"));
    }
    CHECK_FALSE(std::filesystem::exists(failed));

    const std::string cut = (dir / "cut.sgy").string();
    {
        io::ShotWriter out(cut, shots);
        out.write(0, shots[0]);
        CHECK(contains(error_of([&] { out.write(0, shots[0]); }), "written twice"));
        ShotGather other = shots[1];
        other.nt = 40;
        other.data.resize(other.ntraces() * 40);
        // The last gather too is held to its announced trace count.
        ShotGather longer = shots[2];
        longer.receivers.push_back(longer.receivers.back());
        if (!longer.channels.empty()) longer.channels.push_back(longer.channels.back() + 1);
        longer.data.resize(longer.ntraces() * std::size_t(longer.nt));
        CHECK(contains(error_of([&] { out.write(2, longer); }), "traces, not the"));
        const std::string msg = error_of([&] { out.write(1, other); });
        CHECK(contains(msg, "shot 10 has nt 40"));
        CHECK(contains(error_of([&] { out.commit(); }), "1 of the 3 announced gathers written"));
    }
    CHECK_FALSE(std::filesystem::exists(cut));
    CHECK_FALSE(std::filesystem::exists(cut + ".tmp"));
}
