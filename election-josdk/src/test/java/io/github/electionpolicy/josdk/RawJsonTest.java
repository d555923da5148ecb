package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RawJson}, the fence's own JSON reader and writer, against fabric8's (Jackson): for seeded random JSON values
 * (nested objects and arrays, strings with escapes, control characters, non-ASCII and surrogate pairs, integers,
 * fractions, exponents), what it writes again reads, through fabric8, as the same value as the text it read; every
 * number goes as the text it came as; and text that is not one JSON value is refused, not passed on altered.
 */
class RawJsonTest {

  private static final KubernetesSerialization FABRIC8 = new KubernetesSerialization();
  private static final long SEED = 20261207L;

  @Test
  void whatItWritesAgainIsTheValueItReadForSeededRandomJson() {
    SplittableRandom random = new SplittableRandom(SEED);
    for (int i = 0; i < 2_000; i++) {
      Object value = value(random, 0);
      String text = FABRIC8.asJson(value);
      String again = RawJson.write(RawJson.read(text), FABRIC8::asJson);
      assertThat(FABRIC8.unmarshal(again, Object.class)).as("seed %s, value %s: %s", SEED, i, text)
          .isEqualTo(FABRIC8.unmarshal(text, Object.class));
    }
  }

  @Test
  void whitespaceAndEscapesAsAUserWritesThemReadAsFabric8ReadsThem() {
    String text = " {\n \"a\" : [ 1 , -0.5e-3 , true , false , null , \"\\u00e9\\/\\\"\\\\\\b\\f\\n\\r\\t\" ] ,"
        + "\t\"b\":{},\"c\":[],\"\\ud83d\\ude00\":\"😀\"}\r\n";
    String again = RawJson.write(RawJson.read(text), FABRIC8::asJson);
    assertThat(FABRIC8.unmarshal(again, Object.class)).isEqualTo(FABRIC8.unmarshal(text, Object.class));
  }

  @ParameterizedTest
  @ValueSource(strings = {"1e400", "-1E-400", "1e2", "100.0", "-0", "-0.0", "12345678901234567890123456789",
      "0.1000000000000000055511151231257827", "2.5E+10"})
  void aNumberGoesAsTheTextItCameAs(String number) {
    assertThat(RawJson.write(RawJson.read("{\"n\":[" + number + "]}"), FABRIC8::asJson))
        .isEqualTo("{\"n\":[" + number + "]}");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[01]", "[1.]", "[.5]", "[1e]",
      "[+1]", "\"\\x\"", "\"\\u12\"", "\"a\nb\"", "tru", "nul", "[1] [2]", "{\"a\":1}}", "'a'", "[NaN]", "[Infinity]"})
  void textThatIsNotOneJsonValueIsRefused(String text) {
    assertThatThrownBy(() -> RawJson.read(text)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("not JSON at character ");
  }

  @Test
  void everyCutOfAJsonTextIsRefusedOrReadsAsWhatItSays() {
    SplittableRandom random = new SplittableRandom(SEED + 1);
    for (int i = 0; i < 300; i++) {
      String text = FABRIC8.asJson(value(random, 0));
      for (int cut = 0; cut < text.length(); cut++) {
        String prefix = text.substring(0, cut);
        Object read;
        try {
          read = RawJson.read(prefix);
        } catch (IllegalArgumentException refused) {
          continue;
        }
        // A prefix that reads is itself one JSON value (a number cut short, "12" of "123"): as fabric8 reads it.
        assertThat(FABRIC8.unmarshal(RawJson.write(read, FABRIC8::asJson), Object.class)).as(prefix)
            .isEqualTo(FABRIC8.unmarshal(prefix, Object.class));
      }
    }
  }

  private static Object value(SplittableRandom random, int depth) {
    int kind = random.nextInt(depth >= 4 ? 5 : 7);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return random.nextBoolean();
      case 2:
        return random.nextBoolean() ? (Object) random.nextLong() : (Object) random.nextInt(-1000, 1000);
      case 3:
        return random.nextBoolean() ? random.nextDouble() * Math.pow(10, random.nextInt(-20, 20))
            : -random.nextDouble();
      case 4:
        return string(random);
      case 5: {
        Map<String, Object> object = new LinkedHashMap<>();
        for (int i = random.nextInt(5); i > 0; i--) {
          object.put(string(random), value(random, depth + 1));
        }
        return object;
      }
      default: {
        List<Object> array = new ArrayList<>();
        for (int i = random.nextInt(5); i > 0; i--) {
          array.add(value(random, depth + 1));
        }
        return array;
      }
    }
  }

  private static final String ALPHABET = "az09 \"\\/\b\f\n\r\t\u0000\u001f\u007fé€中\u2028";

  private static String string(SplittableRandom random) {
    StringBuilder out = new StringBuilder();
    for (int i = random.nextInt(8); i > 0; i--) {
      if (random.nextInt(10) == 0) {
        out.append("😀"); // a surrogate pair
      } else {
        out.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
      }
    }
    return out.toString();
  }
}
