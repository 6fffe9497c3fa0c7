// The kept fuzz corpus (data/fuzz-corpus/*.h5, README there): every file is
// replayed through the property it records. A "known-finding" file must
// still fail that property, so that a fix is noticed (the file is then
// flipped to status "fixed"); any other file must pass it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "verify/cli/fuzz.hpp"

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
    const auto failure = check_case(parse_property(e.property), e.strategy, e.options, e.kase);
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
    }
  }
}

}  // namespace
}  // namespace slaterlab
