[("W13 EP8", 64, True, [((64,64,3,None,None),1,None), ((64,64,2,None,None),1,None), ((64,64,3,168,None),1,None), ((32,64,3,None,None),2,None), ((32,64,2,None,None),2,None,16), ((64,64,2,None,None),1,None,16)]),
 ("W13 EP8", 48, True, [((64,64,2,None,None),1,None), ((32,64,2,None,None),2,None,16)]),
]
