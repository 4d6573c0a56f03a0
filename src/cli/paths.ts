/** `aura paths`: where aura reads and writes, and which config files it found. */

import type { AuraConfig } from '../config/config.js';
import { EXIT, type CommandResult } from './output.js';

/** Shows the resolved paths. Creates nothing. */
export function pathsCommand(config: AuraConfig): CommandResult {
  const { paths, files } = config;
  const lines = [
    `AURA_HOME: ${paths.home}`,
    `storage: ${paths.storage}`,
    `base: ${paths.base}`,
    `registry: ${paths.agents}`,
    `sessions: ${paths.sessions}`,
    ...(paths.projectDir === null ? [] : [`project: ${paths.projectDir}`]),
    ...files.map((file) => `config_${file.layer}: ${file.path} (${file.loaded ? 'loaded' : 'missing'})`),
  ];
  return {
    exitCode: EXIT.ok,
    json: {
      home: paths.home,
      storage: paths.storage,
      base: paths.base,
      registry: paths.agents,
      sessions: paths.sessions,
      project_dir: paths.projectDir,
      config_files: files,
    },
    human: lines.join('\n'),
  };
}
