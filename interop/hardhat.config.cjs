// A local chain for settlement tests. Same-timestamp blocks: automine otherwise moves block
// time a second per block, which expires authorizations under load.
module.exports = {
  networks: {
    hardhat: { chainId: 31337, hardfork: "cancun", allowBlocksWithSameTimestamp: true },
  },
};
