package io.github.electionpolicy.fabric8;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * A Lease's times as text ({@code MicroTime}: {@code 2026-12-02T13:59:21.123456Z}), written and read by hand in the
 * one form the API server and fabric8's model write, and by {@code java.time}'s formatters otherwise: in a fresh
 * JVM a formatter's first use (building {@link #MICRO_TIME}'s pattern, the first print and the first parse) costs
 * several milliseconds, and the first create's body and answer are on the first election's path. Each hand-written
 * path gives exactly what the formatter gives (see {@code MicroTimesTest}); whatever it does not recognise goes to
 * the formatter.
 */
final class MicroTimes {

  private static final int MICROS_LENGTH = 27; // yyyy-MM-ddTHH:mm:ss.SSSSSSZ

  private MicroTimes() {}

  /** The format of a {@code MicroTime}, as the API server and fabric8's model write it (built at first use). */
  static final class Formatter {
    static final DateTimeFormatter MICRO_TIME =
        DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private Formatter() {}
  }

  /** {@code instant} as {@link Formatter#MICRO_TIME} writes it: in UTC, the fraction cut to microseconds. */
  static String format(Instant instant) {
    long seconds = instant.getEpochSecond();
    LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(seconds, 86_400));
    int year = date.getYear();
    if (year < 1 || year > 9999) {
      return Formatter.MICRO_TIME.format(instant); // the pattern's year of era, sign and width rules
    }
    int second = Math.floorMod(seconds, 86_400);
    char[] text = new char[MICROS_LENGTH];
    digits(text, 0, year, 4);
    text[4] = '-';
    digits(text, 5, date.getMonthValue(), 2);
    text[7] = '-';
    digits(text, 8, date.getDayOfMonth(), 2);
    text[10] = 'T';
    digits(text, 11, second / 3600, 2);
    text[13] = ':';
    digits(text, 14, second / 60 % 60, 2);
    text[16] = ':';
    digits(text, 17, second % 60, 2);
    text[19] = '.';
    digits(text, 20, instant.getNano() / 1000, 6);
    text[26] = 'Z';
    return new String(text);
  }

  /**
   * {@code text} as {@link DateTimeFormatter#ISO_OFFSET_DATE_TIME} reads it, as an instant; throws what that
   * formatter throws for a text it refuses.
   */
  static Instant parse(String text) {
    if (text.length() == MICROS_LENGTH && text.charAt(4) == '-' && text.charAt(7) == '-' && text.charAt(10) == 'T'
        && text.charAt(13) == ':' && text.charAt(16) == ':' && text.charAt(19) == '.' && text.charAt(26) == 'Z') {
      int year = number(text, 0, 4);
      int month = number(text, 5, 2);
      int day = number(text, 8, 2);
      int hour = number(text, 11, 2);
      int minute = number(text, 14, 2);
      int second = number(text, 17, 2);
      int micros = number(text, 20, 6);
      if (year >= 0 && month >= 0 && day >= 0 && hour >= 0 && hour < 24 && minute >= 0 && minute < 60
          && second >= 0 && second < 60 && micros >= 0) {
        try {
          long days = LocalDate.of(year, month, day).toEpochDay();
          return Instant.ofEpochSecond(days * 86_400 + hour * 3600 + minute * 60 + second, micros * 1000L);
        } catch (DateTimeException e) {
          // no such day: the formatter says so in its own words
        }
      }
    }
    return OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
  }

  private static void digits(char[] text, int at, int value, int width) {
    for (int i = at + width - 1; i >= at; i--) {
      text[i] = (char) ('0' + value % 10);
      value /= 10;
    }
  }

  /** The decimal number of {@code width} ASCII digits at {@code at}; -1 if any is no such digit. */
  private static int number(String text, int at, int width) {
    int value = 0;
    for (int i = at; i < at + width; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }
}
