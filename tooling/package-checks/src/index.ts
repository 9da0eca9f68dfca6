export { publishablePackages, tarballName, REPO_ROOT, type WorkspacePackage } from './workspace-packages.js';
export { packPackages, type PackedPackage } from './pack-packages.js';
export { publintMessages, attwCheck, type AttwResult } from './lint-tarball.js';
export { installIntoFreshProject, projectManifest, type PackageManager } from './fresh-project.js';
export { installSize, formatSize, parseSize, type InstallSize } from './install-size.js';
export { statedInstallSize, INSTALL_SIZE_PATTERN, type StatedSize } from './readme-install-size.js';
export { runProgram, startServer, type RunningServer } from './run-program.js';
export { runCommand, cleanEnv, CommandFailedError, type CommandResult } from './run-command.js';
