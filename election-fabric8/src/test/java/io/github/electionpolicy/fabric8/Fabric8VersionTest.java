package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Version;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * This suite runs twice per build: in election-fabric8 against the fabric8 its jar is compiled with, and in
 * election-fabric8-compat7 against fabric8 7.x. Each build names the version it means in the system property
 * {@code fabric8.expectedVersion}; a run on any other fabric8 would prove nothing about that version.
 */
class Fabric8VersionTest {

  @Test
  void theSuiteRunsOnTheFabric8VersionTheBuildDeclares() throws IOException {
    String expected = System.getProperty("fabric8.expectedVersion");
    assumeTrue(expected != null && !expected.isBlank(), "run outside Maven: no version declared");

    assertThat(Version.clientVersion()).as("fabric8's kubernetes-client-api").isEqualTo(expected);
    assertThat(mavenVersionOf("kubernetes-client")).as("fabric8's kubernetes-client (the implementation)")
        .isEqualTo(expected);
    assertThat(mavenVersionOf("kubernetes-httpclient-jdk")).as("fabric8's JDK HTTP client").isEqualTo(expected);
  }

  @Test
  void theBuilderFindsFabric8sImplementationAndTheJdkHttpClient() {
    try (KubernetesClient client = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1/").build())
        .build()) {
      assertThat(client.getClass().getName()).startsWith("io.fabric8.kubernetes.client.impl.");
      assertThat(client.getHttpClient().getClass().getName()).startsWith("io.fabric8.kubernetes.client.jdkhttp.");
    }
  }

  private static String mavenVersionOf(String fabric8Artifact) throws IOException {
    String resource = "META-INF/maven/io.fabric8/" + fabric8Artifact + "/pom.properties";
    try (InputStream in = Fabric8VersionTest.class.getClassLoader().getResourceAsStream(resource)) {
      assertThat(in).as("%s on the test classpath", resource).isNotNull();
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version");
    }
  }
}
