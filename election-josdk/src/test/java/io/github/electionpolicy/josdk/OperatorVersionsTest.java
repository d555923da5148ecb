package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Version;
import io.javaoperatorsdk.operator.api.config.BaseConfigurationService;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The module is built and tested on the JOSDK release it pins and on the fabric8 that release is built on, through
 * fabric8's BOM as docs/josdk.md tells users to do; election-fabric8's jar, built against fabric8 8.0.0, runs here on
 * 7.6.1. The versions come from the build ({@code josdk.expectedVersion}, {@code fabric8.expectedVersion}).
 */
class OperatorVersionsTest {

  @Test
  void theTestsRunOnTheJosdkAndFabric8VersionsTheBuildPins() throws IOException {
    String josdk = System.getProperty("josdk.expectedVersion");
    String fabric8 = System.getProperty("fabric8.expectedVersion");
    assumeTrue(josdk != null && fabric8 != null, "run outside Maven: no versions declared");

    assertThat(new BaseConfigurationService().getVersion().getSdkVersion()).as("JOSDK").isEqualTo(josdk);
    assertThat(Version.clientVersion()).as("fabric8's kubernetes-client-api").isEqualTo(fabric8);
    for (String artifact : new String[] {"kubernetes-client", "kubernetes-httpclient-jdk", "kubernetes-model-core"}) {
      assertThat(mavenVersionOf("io.fabric8", artifact)).as("fabric8's %s", artifact).isEqualTo(fabric8);
    }
  }

  @Test
  void theOneHttpClientIsTheJdks() {
    assertThat(OperatorVersionsTest.class.getClassLoader()
        .getResource("META-INF/maven/io.fabric8/kubernetes-httpclient-vertx/pom.properties"))
        .as("JOSDK's Vert.x HTTP client is excluded").isNull();
    try (KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1/").build()).build()) {
      assertThat(client.getHttpClient().getClass().getName()).startsWith("io.fabric8.kubernetes.client.jdkhttp.");
    }
  }

  private static String mavenVersionOf(String group, String artifact) throws IOException {
    String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = OperatorVersionsTest.class.getClassLoader().getResourceAsStream(resource)) {
      assertThat(in).as("%s on the test classpath", resource).isNotNull();
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version");
    }
  }
}
