#include "text/source_set.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <set>

#include "text/object_store.h"
#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using testing::TempDir;

std::vector<std::string> Relative(const SourceSet& set, const TempDir& dir) {
  std::vector<std::string> out;
  for (const SourceFile& f : set.files()) out.push_back(f.path.substr(dir.path().size() + 1));
  return out;
}

TEST(SourceSetTest, ExpandsDirectoriesRecursivelyInByteOrder) {
  TempDir dir;
  dir.Write("c/b.jsonl", "x");
  dir.Write("c/a.jsonl", "x");
  dir.Write("c/sub/z.txt", "x");
  dir.Write("c/A.jsonl", "x");
  dir.Write("c/.hidden.jsonl", "x");
  dir.Write("c/.git/config", "x");
  dir.Write("c/\xC3\xA9.txt", "x");  // sorts after ASCII by its bytes
  auto set = SourceSet::Expand({dir.path() + "/c"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(Relative(*set, dir),
            (std::vector<std::string>{"c/A.jsonl", "c/a.jsonl", "c/b.jsonl", "c/sub/z.txt", "c/\xC3\xA9.txt"}));
  EXPECT_EQ(set->total_files(), 5u);
  EXPECT_EQ(set->files()[0].size_bytes, 1u);
}

TEST(SourceSetTest, OrderDoesNotDependOnSpecOrderAndRepeatsAreRemoved) {
  TempDir dir;
  dir.Write("d/1.jsonl", "1");
  dir.Write("d/2.jsonl", "2");
  dir.Write("d/3.txt", "3");
  std::string d = dir.path() + "/d";
  auto a = SourceSet::Expand({d + "/3.txt", d + "/*.jsonl", d});
  auto b = SourceSet::Expand({d, d + "/./1.jsonl", d + "/2.jsonl"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Relative(*a, dir), (std::vector<std::string>{"d/1.jsonl", "d/2.jsonl", "d/3.txt"}));
  EXPECT_EQ(Relative(*a, dir), Relative(*b, dir));
}

TEST(SourceSetTest, OrderIsByResolvedPathNotBySpelling) {
  TempDir dir;
  dir.Write("m/a.jsonl", "1");
  dir.Write("z/b.jsonl", "2");
  // "link/b.jsonl" spells z/b.jsonl so that it sorts before "m/a.jsonl";
  // resolved, it still comes after it.
  ASSERT_EQ(::symlink(dir.Path("z").c_str(), dir.Path("link").c_str()), 0);
  auto by_link = SourceSet::Expand({dir.Path("link/b.jsonl"), dir.Path("m/a.jsonl")});
  auto direct = SourceSet::Expand({dir.Path("z/b.jsonl"), dir.Path("m/a.jsonl")});
  ASSERT_TRUE(by_link.ok() && direct.ok());
  EXPECT_EQ(Relative(*by_link, dir), (std::vector<std::string>{"m/a.jsonl", "link/b.jsonl"}));  // kept as spelled
  EXPECT_EQ(Relative(*direct, dir), (std::vector<std::string>{"m/a.jsonl", "z/b.jsonl"}));
  EXPECT_EQ(ResolvedPath(by_link->files()[1].path), ResolvedPath(direct->files()[1].path));
}

TEST(SourceSetTest, TwoNamesOfOneFileAreReadOnce) {
  TempDir dir;
  std::string target = dir.Write("d/real.jsonl", "x");
  ASSERT_EQ(::symlink(target.c_str(), dir.Path("d/zlink.jsonl").c_str()), 0);
  auto set = SourceSet::Expand({dir.path() + "/d"});
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(Relative(*set, dir), (std::vector<std::string>{"d/real.jsonl"}));
}

TEST(SourceSetTest, GlobsWithStarQuestionAndDoubleStar) {
  TempDir dir;
  dir.Write("g/part-01.jsonl", "");
  dir.Write("g/part-02.jsonl.zst", "");
  dir.Write("g/part-3.jsonl", "");
  dir.Write("g/x/y/part-04.jsonl", "");
  std::string g = dir.path() + "/g";
  auto q = SourceSet::Expand({g + "/part-??.jsonl*"});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(Relative(*q, dir), (std::vector<std::string>{"g/part-01.jsonl", "g/part-02.jsonl.zst"}));
  auto deep = SourceSet::Expand({g + "/**/part-*.jsonl"});
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(Relative(*deep, dir),
            (std::vector<std::string>{"g/part-01.jsonl", "g/part-3.jsonl", "g/x/y/part-04.jsonl"}));
}

TEST(SourceSetTest, MissingPathsAndEmptyMatchesAreNotFound) {
  TempDir dir;
  dir.Write("d/a.jsonl", "");
  ::mkdir(dir.Path("empty").c_str(), 0755);
  struct Case {
    std::string spec, says;
  } cases[] = {
      {dir.path() + "/d/missing.jsonl", "does not exist"},
      {dir.path() + "/nodir/a.jsonl", "does not exist"},
      {dir.path() + "/d/*.parquet", "matches no file"},
      {dir.path() + "/empty", "holds no regular file"},
  };
  for (const Case& c : cases) {
    auto set = SourceSet::Expand({dir.path() + "/d/a.jsonl", c.spec});
    ASSERT_FALSE(set.ok()) << c.spec;
    EXPECT_TRUE(set.status().IsNotFound()) << set.status().ToString();
    EXPECT_NE(set.status().message().find(c.spec), std::string::npos) << set.status().ToString();
    EXPECT_NE(set.status().message().find(c.says), std::string::npos) << set.status().ToString();
  }
  EXPECT_FALSE(SourceSet::Expand({}).ok());
}

TEST(SourceSetTest, FifoIsRefused) {
  TempDir dir;
  std::string fifo = dir.Path("pipe.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto set = SourceSet::Expand({fifo});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(set.status().message().find("not a regular file"), std::string::npos);
  // Inside a directory it is passed over rather than blocking the walk.
  dir.Write("a.jsonl", "x");
  auto walked = SourceSet::Expand({dir.path()});
  ASSERT_TRUE(walked.ok());
  EXPECT_EQ(Relative(*walked, dir), (std::vector<std::string>{"a.jsonl"}));
}

TEST(SourceSetTest, UnreadableFileOfTheShardIsAnError) {
  TempDir dir;
  dir.Write("d/a.jsonl", "x");
  std::string secret = dir.Write("d/b.jsonl", "x");
  ASSERT_EQ(::chmod(secret.c_str(), 0), 0);
  ::chmod(dir.path().c_str(), 0755);
  auto check = [&]() -> int {
    auto set = SourceSet::Expand({dir.path() + "/d"});
    if (set.ok()) return 1;
    if (set.status().message().find("b.jsonl") == std::string::npos) return 2;
    // The other shard does not read b.jsonl and does not care.
    auto other = SourceSet::Expand({dir.path() + "/d"}, ShardSpec{0, 2});
    if (!other.ok() || other->files().size() != 1) return 3;
    return 0;
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(check(), 0);
    return;
  }
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(77);
    ::_exit(check());
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot drop root privileges here to test an unreadable file";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(SourceSetTest, ShardsPartitionTheFilesByIndex) {
  TempDir dir;
  for (int i = 0; i < 23; ++i) dir.Write("s/f" + std::to_string(100 + i) + ".txt", "x");
  auto all = SourceSet::Expand({dir.path() + "/s"});
  ASSERT_TRUE(all.ok());
  for (uint32_t n : {1u, 2u, 5u, 23u, 40u}) {
    std::set<std::string> seen;
    for (uint32_t i = 0; i < n; ++i) {
      auto shard = SourceSet::Expand({dir.path() + "/s"}, ShardSpec{i, n});
      ASSERT_TRUE(shard.ok());
      EXPECT_EQ(shard->total_files(), 23u);
      for (const SourceFile& f : shard->files()) {
        EXPECT_EQ(f.global_index % n, i);
        EXPECT_EQ(all->files()[f.global_index].path, f.path);
        EXPECT_TRUE(seen.insert(f.path).second) << f.path << " in two shards";
      }
    }
    EXPECT_EQ(seen.size(), 23u) << "shards of " << n << " miss files";
  }
}

TEST(SourceSetTest, ShardSpecParsing) {
  auto ok = ShardSpec::Parse("3/8");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->index, 3u);
  EXPECT_EQ(ok->count, 8u);
  EXPECT_EQ(ok->ToString(), "3/8");
  for (const char* bad : {"8/8", "1/0", "x/2", "1", "/2", "1/", "-1/2", "1/2/3", " 1/2"}) {
    auto r = ShardSpec::Parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("I/N"), std::string::npos);
    }
  }
  TempDir dir;
  dir.Write("a.txt", "x");
  EXPECT_FALSE(SourceSet::Expand({dir.path()}, ShardSpec{2, 2}).ok());
}

TEST(SourceSetTest, S3UrisAreParsedBeforeAnyRequest) {
  // A malformed URI is refused by its spelling, with or without S3 support.
  auto bad = SourceSet::Expand({"s3://Not_A_Bucket/a.jsonl"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'s3://Not_A_Bucket/a.jsonl'"), std::string::npos) << bad.status().ToString();
  // An object keeps its URI as its resolved path (no working directory).
  EXPECT_EQ(ResolvedPath("s3://bucket/dir/a.jsonl"), "s3://bucket/dir/a.jsonl");
}

TEST(SourceSetTest, S3WithoutThePluginIsUnsupportedNamingTheInput) {
  if (ObjectStoreAvailable()) GTEST_SKIP() << "this build reads S3 (python/tests/test_ingest_s3.py tests it)";
  auto set = SourceSet::Expand({"s3://corpus/crawl/"});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(set.status().message().find("'s3://corpus/crawl/': S3 input (s3://) was not built in"),
            std::string::npos)
      << set.status().ToString();
}

}  // namespace
}  // namespace tokenfeed::text
