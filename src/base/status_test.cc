#include "tokenfeed/status.h"

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

namespace tokenfeed {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(s.message().empty());
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Status::Corruption("partition 3 offset 17: bad crc");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.ToString(), "Corruption: partition 3 offset 17: bad crc");
  Status c = s.WithContext("reading log:/tmp/x/t");
  EXPECT_EQ(c.message(), "reading log:/tmp/x/t: partition 3 offset 17: bad crc");
  EXPECT_EQ(c.code(), StatusCode::kCorruption);
}

TEST(StatusTest, FromErrnoMapsCodes) {
  EXPECT_TRUE(Status::FromErrno(ENOENT, "open", "/nope").IsNotFound());
  EXPECT_EQ(Status::FromErrno(ENOSPC, "write", "/f").code(), StatusCode::kResourceExhausted);
  EXPECT_NE(Status::FromErrno(EACCES, "open", "/f").message().find("'/f'"), std::string::npos);
}

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status UseHalf(int x, int* out) {
  TF_ASSIGN_OR_RETURN(int h, Half(x));
  *out = h;
  return Status::OK();
}

TEST(ResultTest, ValueAndError) {
  Result<int> r = Half(8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 4);
  Result<int> e = Half(3);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "odd: 3");
  int out = 0;
  EXPECT_TRUE(UseHalf(10, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_EQ(UseHalf(7, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, 5);
}

TEST(ResultTest, OkStatusWithoutValueIsInternalError) {
  Result<std::string> r{Status::OK()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(ResultTest, MoveOnlyAndCopy) {
  Result<std::string> a{std::string("hello")};
  Result<std::string> b = a;
  EXPECT_EQ(*b, "hello");
  Result<std::string> c = std::move(a);
  EXPECT_EQ(*c, "hello");
  c = Status::NotFound("x");
  EXPECT_FALSE(c.ok());
  c = std::string("again");
  EXPECT_EQ(*c, "again");
}

}  // namespace
}  // namespace tokenfeed
