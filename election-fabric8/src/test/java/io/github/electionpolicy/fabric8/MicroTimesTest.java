package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The hand-written MicroTime text ({@link MicroTimes}) is java.time's, written and read, or java.time's answer. */
class MicroTimesTest {

  private static final long YEAR_1 = -62_135_596_800L;
  private static final long YEAR_10000 = 253_402_300_800L;

  @Property(tries = 2000)
  void writesWhatTheFormatterWritesAndReadsWhatTheFormatterReads(
      @ForAll @LongRange(min = YEAR_1 - 86_400L * 800, max = YEAR_10000 + 86_400L * 800) long second,
      @ForAll @IntRange(min = 0, max = 999_999_999) int nanos) {
    Instant instant = Instant.ofEpochSecond(second, nanos);
    String text = MicroTimes.format(instant);
    assertThat(text).isEqualTo(MicroTimes.Formatter.MICRO_TIME.format(instant));
    if (second >= YEAR_1 && second < YEAR_10000) {
      assertThat(MicroTimes.parse(text)).isEqualTo(iso(text)).isEqualTo(Instant.ofEpochSecond(second,
          nanos / 1000 * 1000));
    }
  }

  @Property(tries = 500)
  void readsTheServersFormAroundToday(@ForAll @LongRange(min = 0, max = 4_102_444_800L) long second,
      @ForAll @IntRange(min = 0, max = 999_999) int micros) {
    String text = MicroTimes.format(Instant.ofEpochSecond(second, micros * 1000L));
    assertThat(MicroTimes.parse(text)).isEqualTo(iso(text));
  }

  @Test
  void edgesAreReadAsTheFormatterReadsThemOrRefusedAsItRefusesThem() {
    for (String text : List.of("2024-02-29T23:59:59.999999Z", "2023-02-29T00:00:00.000000Z",
        "2023-04-31T00:00:00.000000Z", "2023-00-10T00:00:00.000000Z", "2023-13-10T00:00:00.000000Z",
        "2023-01-00T00:00:00.000000Z", "2023-01-01T24:00:00.000000Z", "2023-01-01T23:60:00.000000Z",
        "2023-01-01T23:59:60.000000Z", "0000-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z",
        "2023-01-01t00:00:00.000000Z", "2023-01-01T00:00:00.000000z", "2023-01-01T00:00:00.00000aZ",
        "+023-01-01T00:00:00.000000Z", "2023-01-01T00:00:00.123Z", "2023-01-01T00:00:00Z",
        "2023-01-01T00:00:00.123456789Z", "2023-01-01T01:00:00.000000+01:00", "2023-01-01 00:00:00.000000Z",
        "2023-1-01T00:00:00.0000000Z", "")) {
      Instant expected;
      try {
        expected = iso(text);
      } catch (DateTimeParseException e) {
        assertThatThrownBy(() -> MicroTimes.parse(text)).as(text).isInstanceOf(DateTimeParseException.class);
        continue;
      }
      assertThat(MicroTimes.parse(text)).as(text).isEqualTo(expected);
    }
  }

  @Test
  void writesTheFormattersTextOutsideTheFourDigitYears() {
    for (Instant instant : List.of(Instant.ofEpochSecond(YEAR_1 - 1), Instant.ofEpochSecond(YEAR_10000),
        Instant.ofEpochSecond(YEAR_1), Instant.ofEpochSecond(YEAR_10000 - 1, 999_999_999), Instant.EPOCH)) {
      assertThat(MicroTimes.format(instant)).as(instant.toString())
          .isEqualTo(MicroTimes.Formatter.MICRO_TIME.format(instant));
    }
  }

  private static Instant iso(String text) {
    return OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
  }
}
