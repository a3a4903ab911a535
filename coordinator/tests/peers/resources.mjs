// The resources both TypeScript control peers serve (ts-v1/server-legacy.mjs on SDK 1.x,
// ts-v2/server.mjs on SDK v2): a readme, and an item template (listed by
// resources/templates/list, apart from the static resources).
//
// Plain JavaScript with no imports, so it runs with either SDK as .ci/install-peers installs
// them: each peer passes its McpServer and its SDK's ResourceTemplate.
export function registerControlResources(server, ResourceTemplate) {
  server.registerResource('readme', 'vantage-control://readme', { mimeType: 'text/markdown' }, async (uri) => ({
    contents: [{ uri: uri.href, text: '# control peer' }],
  }));
  server.registerResource(
    'item',
    new ResourceTemplate('vantage-control://items/{id}', { list: undefined }),
    { mimeType: 'application/json' },
    async (uri) => ({ contents: [{ uri: uri.href, text: '{}' }] }),
  );
}
