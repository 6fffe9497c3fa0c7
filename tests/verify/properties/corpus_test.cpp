// The corpus (verify/properties/corpus.hpp): an entry round-trips through its
// replay file bit for bit, and the kept corpus (data/fuzz-corpus/*.h5, README
// there) is replayed through the property each file records. A
// "known-finding" file must still fail that property, so that a fix is
// noticed (the file is then flipped to status "fixed"); any other file must
// pass it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/verify/properties/fuzz_test_support.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/properties/check_case.hpp"
#include "verify/properties/corpus.hpp"
#include "verify/properties/randsvd_case.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SLATERLAB_SOURCE_DIR) / "data" / "fuzz-corpus";

TEST(FuzzCorpus, EveryCaseBehavesAsItsStatusSays) {
  const auto files = corpus_files(kCorpus);
  ASSERT_FALSE(files.empty()) << kCorpus;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const CorpusEntry e = read_corpus_entry(file);
    const Property property = parse_property(e.property);
    CheckStats stats;
    const auto failure = check_case(property, e.strategy, e.options, e.property_case, &stats);
    if (e.status == "known-finding") {
      EXPECT_TRUE(failure.has_value())
          << e.label << " now satisfies " << e.property
          << ": the finding is fixed; set the file's status to \"fixed\" (README)";
      if (failure) {
        EXPECT_EQ(failure->property, e.property);
      }
    } else {
      EXPECT_FALSE(failure.has_value()) << e.label << " (status " << e.status
                                        << "): " << failure->message;
      // A case beyond the error model would pass without checking anything.
      EXPECT_TRUE(compared_something(property, stats, e.property_case))
          << e.label << " (status " << e.status << "): " << e.property << " compared nothing";
    }
  }
}

using Corpus = testing::ScratchTest;
using testing::same_case;

TEST_F(Corpus, EntryRoundTrips) {
  CorpusEntry e;
  RandsvdRecipe recipe;
  recipe.n = 3;
  recipe.electrons = {0, 2, 1};
  recipe.accepts = {1, 0, 1};
  recipe.seed = 5;
  e.property_case = build_randsvd_case(recipe);
  e.property_case.probe_column = 2;
  e.property_case.probe_source = 0;
  e.strategy = "delayed";
  e.options.precision = Precision::mixed;
  e.options.recompute_every = 7;
  e.options.breakdown = 0.1 + 0.2;  // not a short decimal: must round-trip exactly
  e.options.k = 3;
  e.options.variant = "naive";
  e.label = "delayed-3-mixed-naive";
  e.property = "NearSingularIsBreakdown";
  e.message = "a message, with \"quotes\"";
  e.status = "known-finding";
  e.seed = 18446744073709551615ull;
  const fs::path file = dir_ / corpus_file_name(e.label, e.property, e.property_case);
  write_corpus_entry(file, e);
  EXPECT_EQ(corpus_files(dir_), std::vector<fs::path>{file});  // no temporary left

  const CorpusEntry back = read_corpus_entry(file);
  EXPECT_TRUE(same_case(back.property_case, e.property_case));
  EXPECT_EQ(back.strategy, e.strategy);
  EXPECT_EQ(back.options.precision, e.options.precision);
  EXPECT_EQ(back.options.recompute_every, 7);
  EXPECT_EQ(back.options.breakdown, e.options.breakdown);
  EXPECT_EQ(back.options.k, 3);
  EXPECT_EQ(back.options.variant, "naive");
  EXPECT_EQ(back.label, e.label);
  EXPECT_EQ(back.property, e.property);
  EXPECT_EQ(back.message, e.message);
  EXPECT_EQ(back.status, e.status);
  EXPECT_EQ(back.seed, e.seed);

  // A replay file without the fuzz attributes is not a corpus entry.
  ReplayData plain;
  plain.initial = e.property_case.initial;
  plain.columns.resize(3, 0);
  plain.accept.emplace();
  write_replay(dir_ / "plain.h5", plain);
  try {
    read_corpus_entry(dir_ / "plain.h5");
    FAIL() << "accepted a file without 'strategy'";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("missing attribute 'strategy'"), std::string::npos)
        << error.what();
  }
}


}  // namespace
}  // namespace slaterlab
