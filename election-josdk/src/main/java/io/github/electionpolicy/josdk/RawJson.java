package io.github.electionpolicy.josdk;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON reader and writer for the bodies the fence adds the uid to, which keeps each number as the text it came as
 * ({@link Number}): read as a double, {@code 1e400} went as the string {@code "Infinity"} (which kube-apiserver 1.20
 * takes where it refuses {@code 1e400}) and {@code 1e2} as {@code 100.0}. Objects are {@link LinkedHashMap}s (the
 * last of a repeated name wins), arrays {@link ArrayList}s, strings, booleans and null as such. No Jackson: the
 * module runs on fabric8 7 and 8, whose Jackson differ.
 */
final class RawJson {

  /** A JSON number, as its text. */
  record Number(String text) {}

  private final String text;
  private int at;

  private RawJson(String text) {
    this.text = text;
  }

  /**
   * {@code text} read.
   *
   * @throws IllegalArgumentException if it is not one JSON value
   */
  static Object read(String text) {
    RawJson reader = new RawJson(text);
    Object value = reader.value();
    reader.space();
    if (reader.at != text.length()) {
      throw reader.error("more after the value");
    }
    return value;
  }

  /** {@code value} written; a value of another type (from fabric8's YAML reader) as {@code leaf} writes it. */
  static String write(Object value, java.util.function.Function<Object, String> leaf) {
    StringBuilder out = new StringBuilder();
    write(value, leaf, out);
    return out.toString();
  }

  private static void write(Object value, java.util.function.Function<Object, String> leaf, StringBuilder out) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof Number number) {
      out.append(number.text());
    } else if (value instanceof String string) {
      string(string, out);
    } else if (value instanceof Boolean bool) {
      out.append(bool);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
      while (entries.hasNext()) {
        Map.Entry<?, ?> entry = entries.next();
        string(String.valueOf(entry.getKey()), out);
        out.append(':');
        write(entry.getValue(), leaf, out);
        if (entries.hasNext()) {
          out.append(',');
        }
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(list.get(i), leaf, out);
      }
      out.append(']');
    } else {
      out.append(leaf.apply(value));
    }
  }

  private static void string(String string, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < string.length(); i++) {
      char c = string.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  private Object value() {
    space();
    if (at >= text.length()) {
      throw error("a value expected");
    }
    char c = text.charAt(at);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        if (c == '-' || c >= '0' && c <= '9') {
          return number();
        }
        throw error("unexpected '" + c + "'");
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> object = new LinkedHashMap<>();
    at++;
    space();
    if (peek() == '}') {
      at++;
      return object;
    }
    while (true) {
      space();
      if (peek() != '"') {
        throw error("a name expected");
      }
      String name = string();
      space();
      expect(':');
      object.put(name, value());
      space();
      char c = next();
      if (c == '}') {
        return object;
      }
      if (c != ',') {
        throw error("',' or '}' expected");
      }
    }
  }

  private List<Object> array() {
    List<Object> array = new ArrayList<>();
    at++;
    space();
    if (peek() == ']') {
      at++;
      return array;
    }
    while (true) {
      array.add(value());
      space();
      char c = next();
      if (c == ']') {
        return array;
      }
      if (c != ',') {
        throw error("',' or ']' expected");
      }
    }
  }

  private String string() {
    at++;
    StringBuilder out = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') {
        return out.toString();
      }
      if (c == '\\') {
        char e = next();
        switch (e) {
          case '"', '\\', '/' -> out.append(e);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (at + 4 > text.length()) {
              throw error("a \\u escape cut short");
            }
            try {
              out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            } catch (NumberFormatException bad) {
              throw error("a bad \\u escape");
            }
            at += 4;
          }
          default -> throw error("a bad escape");
        }
      } else if (c < 0x20) {
        throw error("a control character in a string");
      } else {
        out.append(c);
      }
    }
  }

  private Number number() {
    int start = at;
    if (peek() == '-') {
      at++;
    }
    if (peek() == '0') {
      at++;
    } else {
      digits();
    }
    if (peek() == '.') {
      at++;
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      at++;
      if (peek() == '+' || peek() == '-') {
        at++;
      }
      digits();
    }
    return new Number(text.substring(start, at));
  }

  private void digits() {
    int start = at;
    while (peek() >= '0' && peek() <= '9') {
      at++;
    }
    if (at == start) {
      throw error("a digit expected");
    }
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) {
      throw error("'" + word + "' expected");
    }
    at += word.length();
    return value;
  }

  private void space() {
    while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
  }

  private char peek() {
    return at < text.length() ? text.charAt(at) : '\0';
  }

  private char next() {
    if (at >= text.length()) {
      throw error("the end came too soon");
    }
    return text.charAt(at++);
  }

  private void expect(char c) {
    if (next() != c) {
      throw error("'" + c + "' expected");
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("not JSON at character " + at + ": " + what);
  }
}
